// haven.erasures against a real Haven (CONTRACT.md §12.3): the erasure id read from the DELETE's
// Haven-Erasure-Id header through `.withResponse()`, the receipt polled until completed, and
// verify checking it as its holder would — passing with the keys Haven publishes, failing for
// a receipt edited after it was signed, another key, or a receipt not completed yet.
import { generateKeyPairSync } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import canonicalize from 'canonicalize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { eventually } from '../../../test/tcp-proxy.js';
import { type ErasureReceipt, Haven, type StewardJwk, verifyErasureReceipt } from '../src/index.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function listening(t: TestApp): Promise<string> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
}

/** The receipt once its releases have ended (polled, with a deadline). */
async function completedReceipt(haven: Haven, erasureId: string): Promise<ErasureReceipt> {
  let receipt: ErasureReceipt | undefined;
  await eventually(async () => {
    receipt = await haven.erasures.get(erasureId);
    return receipt.completed_at !== null;
  }, 'the erasure to complete');
  return receipt as ErasureReceipt;
}

describe('haven.erasures', () => {
  let t: TestApp;
  let baseUrl = '';
  let stewardKeys: { keys: StewardJwk[] };

  beforeAll(async () => {
    t = await buildTestApp();
    baseUrl = await listening(t);
    stewardKeys = (await (await fetch(`${baseUrl}/.well-known/ocss/keys`)).json()) as {
      keys: StewardJwk[];
    };
  });
  afterAll(async () => {
    await t.close();
  });

  /** A sandbox child erased through the SDK, and its completed receipt. */
  async function erasedChild(session: string) {
    const haven = new Haven({ baseUrl, sandboxSession: session });
    const setup = await haven.setup.quick({ child_name: 'Ada', birth_date: '2015-06-01' });
    const { data, response } = await haven.children.delete(setup.child.id).withResponse();
    expect(response.status).toBe(204);
    expect(data).toBeUndefined();
    const erasureId = response.headers.get('haven-erasure-id') as string;
    expect(erasureId).toMatch(UUID);
    return { haven, setup, erasureId, receipt: await completedReceipt(haven, erasureId) };
  }

  it("reads the erasure id from the DELETE's header and verifies the completed receipt", async () => {
    const { haven, setup, erasureId, receipt } = await erasedChild('erasure-verify');
    expect(receipt).toMatchObject({
      id: erasureId,
      subject: { type: 'child', id: setup.child.id },
      completed_at: expect.any(String),
      erased: expect.objectContaining({ children: 1, policies: 1 }),
      signature: expect.any(String),
    });
    const [key] = stewardKeys.keys;
    expect(key?.kid).toEqual(expect.any(String));
    expect(await haven.erasures.verify(receipt, { stewardKey: stewardKeys })).toEqual({
      valid: true,
      kid: key?.kid,
    });
    // The one key (the JWK itself) does as well as the key set, and so does the function.
    expect(await verifyErasureReceipt(receipt, key as StewardJwk)).toEqual({
      valid: true,
      kid: key?.kid,
    });
    // The receipt's fields in another order: JCS orders them, the receipt still verifies.
    const reordered = Object.fromEntries(Object.entries(receipt).reverse()) as ErasureReceipt;
    expect(await verifyErasureReceipt(reordered, stewardKeys)).toMatchObject({ valid: true });
  });

  it("reads a family's erasure id the same way", async () => {
    const haven = new Haven({ baseUrl, sandboxSession: 'erasure-family' });
    const setup = await haven.setup.quick({ child_name: 'Ada', birth_date: '2015-06-01' });
    const { response } = await haven.families.delete(setup.family.id).withResponse();
    expect(response.status).toBe(204);
    const erasureId = response.headers.get('haven-erasure-id') as string;
    expect(erasureId).toMatch(UUID);
    const receipt = await completedReceipt(haven, erasureId);
    expect(receipt.subject).toEqual({ type: 'family', id: setup.family.id });
    expect(await haven.erasures.verify(receipt, { stewardKey: stewardKeys })).toMatchObject({
      valid: true,
    });
  });

  it('fails for a receipt edited after it was signed', async () => {
    const { haven, receipt } = await erasedChild('erasure-edited');
    const edits: ErasureReceipt[] = [
      { ...receipt, erased: { ...receipt.erased, children: 0 } },
      { ...receipt, erased: { ...receipt.erased, viewing_history: 5000 } },
      { ...receipt, completed_at: '2020-01-01T00:00:00.000Z' },
      { ...receipt, subject: { ...receipt.subject, type: 'family' } },
      { ...receipt, releases: [{ platform_id: 'xbox', status: 'released' }] },
      { ...receipt, note: 'added' } as ErasureReceipt,
    ];
    for (const edited of edits) {
      expect(await haven.erasures.verify(edited, { stewardKey: stewardKeys })).toEqual({
        valid: false,
        reason: "the receipt's fields are not what its signature covers",
      });
    }
    // The payload swapped for the edited receipt's JCS: the signature no longer matches it.
    const [header, , signature] = (receipt.signature as string).split('.');
    const edited = { ...receipt, erased: { ...receipt.erased, children: 0 } };
    const { signature: _, ...statement } = edited;
    const payload = Buffer.from(canonicalize(statement) as string).toString('base64url');
    expect(
      await verifyErasureReceipt(
        { ...edited, signature: `${header}.${payload}.${signature}` },
        stewardKeys,
      ),
    ).toEqual({
      valid: false,
      reason: "the receipt's signature does not verify with the steward key",
    });
  });

  it('fails with a key that is not the steward’s', async () => {
    const { receipt } = await erasedChild('erasure-wrong-key');
    const other = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }) as StewardJwk;
    const [steward] = stewardKeys.keys as [StewardJwk];
    // Another Ed25519 key given as the one to trust.
    expect(await verifyErasureReceipt(receipt, other)).toEqual({
      valid: false,
      reason: "the receipt's signature does not verify with the steward key",
    });
    // A key set without the receipt's kid.
    expect(await verifyErasureReceipt(receipt, { keys: [{ ...other, kid: 'retired' }] })).toEqual({
      valid: false,
      reason: `the receipt is signed by key ${steward.kid}, which is not among the steward keys given`,
    });
    // The steward's kid on another key's material.
    expect(await verifyErasureReceipt(receipt, { keys: [{ ...other, kid: steward.kid }] })).toEqual(
      {
        valid: false,
        reason: "the receipt's signature does not verify with the steward key",
      },
    );
    expect(await verifyErasureReceipt(receipt, { kty: 'RSA', kid: steward.kid })).toEqual({
      valid: false,
      reason: 'the steward key is not an Ed25519 public JWK',
    });
  });

  it('says why, without throwing, for a receipt that is not signed or not a receipt', async () => {
    const { receipt } = await erasedChild('erasure-malformed');
    expect(await verifyErasureReceipt({ ...receipt, signature: null }, stewardKeys)).toEqual({
      valid: false,
      reason: 'the receipt is completed but carries no signature',
    });
    for (const signature of ['abc', 'a.b', '!!.??.**', `${receipt.signature}.more`]) {
      expect(await verifyErasureReceipt({ ...receipt, signature }, stewardKeys)).toEqual({
        valid: false,
        reason: "the receipt's signature is not a compact JWS",
      });
    }
    const [, payload, signature] = (receipt.signature as string).split('.');
    const hs256 = Buffer.from(JSON.stringify({ alg: 'HS256', kid: 'x' })).toString('base64url');
    expect(
      await verifyErasureReceipt(
        { ...receipt, signature: `${hs256}.${payload}.${signature}` },
        stewardKeys,
      ),
    ).toEqual({ valid: false, reason: 'the receipt is signed with HS256, not EdDSA' });
    expect(
      await verifyErasureReceipt(null as unknown as ErasureReceipt, stewardKeys),
    ).toMatchObject({ valid: false, reason: expect.stringMatching(/not an erasure receipt/) });
    expect(await verifyErasureReceipt(receipt, undefined as unknown as StewardJwk)).toMatchObject({
      valid: false,
      reason: expect.stringMatching(/neither a JWK nor a key set/),
    });
  });
});

describe('a pending erasure receipt', () => {
  it('is not valid until it is completed, and says so', async () => {
    // No worker: the erasure's release job waits, so its receipt stays pending.
    const t = await buildTestApp({ env: { WORKERS: 'off' } });
    try {
      const baseUrl = await listening(t);
      const stewardKeys = (await (await fetch(`${baseUrl}/.well-known/ocss/keys`)).json()) as {
        keys: StewardJwk[];
      };
      const haven = new Haven({ baseUrl, sandboxSession: 'erasure-pending' });
      const setup = await haven.setup.quick({ child_name: 'Kit', birth_date: '2016-01-01' });
      await haven.connections.create(setup.family.id, { platform_id: 'xbox' });
      const { response } = await haven.children.delete(setup.child.id).withResponse();
      const pending = await haven.erasures.get(response.headers.get('haven-erasure-id') ?? '');
      expect(pending).toMatchObject({
        completed_at: null,
        signature: null,
        releases: [{ platform_id: 'xbox', status: 'pending' }],
      });
      expect(await haven.erasures.verify(pending, { stewardKey: stewardKeys })).toEqual({
        valid: false,
        reason:
          'the erasure is not completed yet (completed_at is null): its receipt is signed once every release has ended; read it again later',
      });
    } finally {
      await t.close();
    }
  });
});
