// docs/decisions.md "Signed reads ahead of the router": over a real socket, a signed
// request gets exactly the route's answer (status, bytes, headers), a reused nonce the same
// 409, counted in the client's one bucket; whatever the fast path does not fully know reaches
// the route (seen by a hook only routed requests pass), with the body it had already read;
// a request whose body is still arriving holds a drain; a client gone mid-body costs nothing.

import { generateKeyPairSync } from 'node:crypto';
import { connect } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildListeningTestApp, type TestApp } from '../../../test/app.js';
import { type OcssSigner, type SignOptions, signedRequest } from '../../../test/ocss-signer.js';
import { expectSameAnswer, routedRequests } from '../../../test/routed-requests.js';
import { CSM_CATALOG } from '../csm/catalog.js';

const BULK = '/api/v1/csm/reviews/bulk';
const [FIRST, SECOND] = [CSM_CATALOG[7]?.slug as string, CSM_CATALOG[2]?.slug as string];

describe('signed bulk reads answered ahead of the router', () => {
  let t: TestApp & { baseUrl: string };
  let advisor: OcssSigner;
  let routed: string[];
  let clients = 0;
  /** A client address of its own: a fresh per-IP bucket (TRUST_PROXY is on). */
  const newClient = () => `198.51.100.${++clients}`;

  beforeEach(async () => {
    const requests = routedRequests();
    routed = requests.routed;
    t = await buildListeningTestApp({ plugins: [requests.plugin], env: { TRUST_PROXY: 'true' } });
    t.clock.set(new Date());
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const registered = await t.app.inject({
      method: 'POST',
      url: '/api/v1/advisors/self-register',
      payload: {
        did: 'did:ocss:fast-reader',
        public_key_b64url: publicKey.export({ format: 'jwk' }).x,
      },
    });
    expect(registered.statusCode).toBe(200);
    advisor = { keyId: registered.json().key_id, privateKey };
  });
  afterEach(async () => t.close());

  /** A request signed for `path` (the route's own answer when it has a query string). */
  async function signed(
    client: string,
    options: Partial<SignOptions> & { path?: string } = {},
  ): Promise<{ headers: Record<string, string>; body: string; path: string }> {
    const path = options.path ?? BULK;
    const request = await signedRequest(advisor, path, {
      body: { slugs: [], cursor: '' },
      created: t.clock.now(),
      baseUrl: t.baseUrl,
      ...options,
    });
    return {
      headers: { ...(request.headers as Record<string, string>), 'x-forwarded-for': client },
      body: String(request.payload),
      path,
    };
  }

  const send = (request: { headers: Record<string, string>; body: string; path: string }) =>
    fetch(`${t.baseUrl}${request.path}`, {
      method: 'POST',
      headers: request.headers,
      body: request.body,
    });

  it('answers like the route: the same pages, replays and headers, one bucket, an access line', async () => {
    const client = newClient();
    // The route learns the advisor's scope (one read); from then on the fast path answers.
    expect((await send(await signed(client))).status).toBe(200);
    expect(routed).toHaveLength(1);

    let cursor = '';
    for (let page = 0; page < 3; page++) {
      const body = { slugs: [], cursor };
      const reference = await send(await signed(client, { body, path: `${BULK}?reference=1` }));
      const fast = await send(
        await signed(client, { body, headers: { 'X-Request-Id': `signed-read-${page}` } }),
      );
      expect(fast.headers.get('x-request-id')).toBe(`signed-read-${page}`);
      // One bucket across both paths: each answer took exactly one request from the window.
      expect(Number(fast.headers.get('x-ratelimit-remaining'))).toBe(
        Number(reference.headers.get('x-ratelimit-remaining')) - 1,
      );
      const [fastText, referenceText] = [await fast.clone().text(), await reference.clone().text()];
      expect(fastText).toBe(referenceText);
      await expectSameAnswer(fast, reference, `page ${page}`);
      cursor = JSON.parse(fastText).next_cursor;
      expect(typeof cursor).toBe('string');
    }
    // Named slugs too, in the order asked.
    const slugs = { slugs: [FIRST, SECOND], cursor: '' };
    const named = await send(await signed(client, { body: slugs }));
    const namedReference = await send(await signed(client, { body: slugs, path: `${BULK}?r=2` }));
    await expectSameAnswer(named, namedReference, 'named slugs');
    expect(routed).toHaveLength(5);

    // A nonce is claimed once: its reuse is the route's 409, class replay, from either path.
    const once = await signed(client, { nonce: 'fast-nonce-1' });
    expect((await send(once)).status).toBe(200);
    const replayed = await send(once);
    const reference = await signed(client, { nonce: 'fast-nonce-2', path: `${BULK}?r=3` });
    expect((await send(reference)).status).toBe(200);
    const replayedReference = await send(reference);
    expect(await replayed.clone().json()).toMatchObject({ class: 'replay', code: 409 });
    await expectSameAnswer(replayed, replayedReference, 'replay');
    expect(routed).toHaveLength(7);

    // One access line a request, with the route's fields.
    const lines = t.logs.filter((line) => line.msg === 'request completed');
    const fastLine = lines.find((line) => line.reqId === 'signed-read-0');
    // The first request of the test was routed (it taught the route the advisor's scope).
    const routedLine = lines.find((line) => line.route === BULK);
    expect(routedLine?.reqId).not.toBe('signed-read-0');
    expect(fastLine).toMatchObject({ method: 'POST', route: BULK, path: BULK, status: 200 });
    expect(Object.keys(fastLine ?? {}).sort()).toEqual(Object.keys(routedLine ?? {}).sort());
  });

  it('leaves failures to the route, which reads the body the fast path read', async () => {
    const client = newClient();
    const first = await send(await signed(client));
    expect(first.status).toBe(200);
    const { next_cursor: cursor } = (await first.json()) as { next_cursor: string };
    const before = routed.length;
    const cases: Array<[string, Promise<Response>, number, Record<string, unknown>]> = [
      [
        'a body changed after signing',
        send(await signed(client, { tamperedBody: '{"slugs":[],"cursor":"x"}' })),
        401,
        { class: 'signature_invalid', message: 'Content-Digest sha-256 does not match the body' },
      ],
      [
        'a slug no catalog knows',
        send(await signed(client, { body: { slugs: ['no-such-title'] } })),
        403,
        { class: 'standing_failure', failed_step: 'unregistered_slug' },
      ],
      [
        'a cursor of another question',
        send(await signed(client, { body: { slugs: [FIRST], cursor: 'eyJvIjoyNSwicSI6IngifQ' } })),
        400,
        { class: 'malformed' },
      ],
      [
        // Base64url decoding skips what is not in its alphabet: read leniently, this would
        // be the next page. The route refuses text it could not store, so the path does too.
        'a good cursor with a NUL after it',
        send(await signed(client, { body: { slugs: [], cursor: `${cursor}\u0000` } })),
        400,
        { class: 'malformed', message: 'cursor must not contain NUL characters' },
      ],
      [
        'a body that is not JSON',
        send(await signed(client, { body: '{"slugs":' })),
        400,
        { class: 'malformed', message: 'invalid JSON body' },
      ],
      [
        'slugs that are not a list (the route validates)',
        send(await signed(client, { body: { slugs: FIRST } })),
        400,
        { class: 'malformed' },
      ],
    ];
    for (const [what, answer, status, body] of cases) {
      const res = await answer;
      expect(res.status, what).toBe(status);
      expect(await res.json(), what).toMatchObject(body);
    }
    // Requests it passes on as they came: a key in the body or the header (idempotency), a
    // family named, another content type, no signature.
    const untouched = [
      await signed(client, { body: { slugs: [], idempotency_key: 'k-1' } }),
      await signed(client, { headers: { 'Idempotency-Key': 'k-2' } }),
      await signed(client, {
        body: { slugs: [], family_id: '00000000-0000-4000-8000-000000000000' },
      }),
      await signed(client, { headers: { 'Content-Type': 'application/json; charset=utf-8' } }),
    ];
    for (const request of untouched) {
      expect((await send(request)).status, JSON.stringify(request.headers)).toBe(200);
    }
    const unsigned = await send({
      ...(await signed(client)),
      headers: { 'content-type': 'application/json', 'x-forwarded-for': client },
    });
    expect(unsigned.status).toBe(401);
    expect(routed.length - before).toBe(cases.length + untouched.length + 1);
  });

  it('counts in the client bucket the route counts in, and leaves a full one to the route', async () => {
    const client = newClient();
    expect((await send(await signed(client))).status).toBe(200);
    // Unsigned requests fill the window through the route (each counted, each a 401).
    let remaining = Number.POSITIVE_INFINITY;
    while (remaining > 0) {
      const res = await fetch(`${t.baseUrl}${BULK}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': client },
        body: '{}',
      });
      expect(res.status).toBe(401);
      remaining = Number(res.headers.get('x-ratelimit-remaining'));
    }
    const before = routed.length;
    const refused = await send(await signed(client));
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ class: 'rate_limited' });
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(routed.length - before).toBe(1);
    // Another client's bucket is its own.
    expect((await send(await signed(newClient()))).status).toBe(200);
  });

  it('holds a drain while a body is arriving, and forgets a client gone mid-body', async () => {
    const client = newClient();
    expect((await send(await signed(client))).status).toBe(200);
    const before = routed.length;
    const request = await signed(client);
    const head = [
      `POST ${BULK} HTTP/1.1`,
      `Host: 127.0.0.1`,
      `Content-Length: ${Buffer.byteLength(request.body)}`,
      ...Object.entries(request.headers).map(([name, value]) => `${name}: ${value}`),
      '',
      '',
    ].join('\r\n');
    const port = new URL(t.baseUrl).port;

    // A client that goes away after half its body: nothing is answered, nothing breaks.
    const gone = connect(Number(port), '127.0.0.1');
    const goneArrived = new Promise((resolve) => t.app.server.once('request', resolve));
    gone.write(head + request.body.slice(0, 5));
    await goneArrived;
    gone.destroy();

    const socket = connect(Number(port), '127.0.0.1');
    const arrived = new Promise((resolve) => t.app.server.once('request', resolve));
    socket.write(head + request.body.slice(0, 5));
    await arrived;
    let drained = false;
    const draining = t.app.drain(60_000).then(() => {
      drained = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(drained).toBe(false);
    const answered = new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString('utf8');
        if (text.includes('"next_cursor"')) {
          resolve(text);
        }
      });
    });
    socket.write(request.body.slice(5));
    const text = await answered;
    expect(text.startsWith('HTTP/1.1 200 OK')).toBe(true);
    expect(text.toLowerCase()).toContain('connection: close');
    await draining;
    socket.destroy();
    // Both came ahead of the router: one answered, one closed with its client; and no
    // failure was logged.
    expect(routed.length - before).toBe(0);
    expect(t.logs.filter((line) => Number(line.level) >= 50)).toEqual([]);
  });
});
