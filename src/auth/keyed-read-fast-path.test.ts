// docs/decisions.md "Keyed reads ahead of the router": over a real socket,
// a key in memory gets exactly the route's answer (status, bytes, headers), its failures in
// the same envelope, counted in its org's bucket and its usage, with an access line naming
// the route; whatever the fast path does not fully know reaches the route, seen here by a
// hook that only routed requests pass; and a read in hand holds a drain like a routed one.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildListeningTestApp, type TestApp } from '../../test/app.js';
import {
  bearer,
  createOrg,
  longSession,
  type MintedKey,
  mintKey,
  type Session,
} from '../../test/identity.js';
import {
  expectSameAnswer,
  expectScopeRefusedTwice,
  routedRequests,
} from '../../test/routed-requests.js';
import { keyedRead } from './keyed-read-fast-path.js';

const GATED = '/api/v1/developer/test-gated/:itemID';

/** A keyed read that waits for the test to let it finish (a read in hand during a drain). */
function gatedRoute() {
  let entered: () => void = () => {};
  let release: () => void = () => {};
  const state = {
    entered: new Promise<void>((resolve) => {
      entered = resolve;
    }),
    gate: new Promise<void>((resolve) => {
      release = resolve;
    }),
    release: () => release(),
    armed: false,
  };
  const read = keyedRead(async (_principal, params) => {
    if (state.armed) {
      entered();
      await state.gate;
    }
    return { id: params.itemID };
  });
  async function plugin(app: FastifyInstance) {
    app.get(
      GATED,
      {
        config: { auth: 'developer', scope: 'read:families', keyedRead: read },
        schema: {
          operationId: 'testGated',
          summary: 'A read the test holds open',
          tags: ['Test'],
          params: Type.Object({ itemID: Type.String({ format: 'uuid' }) }),
          response: { 200: Type.Object({ id: Type.String() }) },
        },
      },
      async (request) => read(request.principal as never, request.params as never),
    );
  }
  return { state, plugin };
}

describe('keyed reads by id answered ahead of the router', () => {
  let t: TestApp & { baseUrl: string };
  let owner: Session;
  let orgId: string;
  let key: MintedKey;
  let familyId: string;
  let childId: string;
  /** Paths of the socket's requests (not the test's injected ones) that Fastify routed. */
  let routed: string[];
  let gated: ReturnType<typeof gatedRoute>;

  beforeEach(async () => {
    const requests = routedRequests();
    routed = requests.routed;
    gated = gatedRoute();
    Object.assign(gated.plugin, { [Symbol.for('skip-override')]: true });
    t = await buildListeningTestApp({ plugins: [requests.plugin, gated.plugin] });
    owner = await longSession(t);
    orgId = (await createOrg(t.app, owner)).id;
    key = await mintKey(t.app, owner, orgId);
    const family = await t.app.inject({
      method: 'POST',
      url: '/api/v1/developer/families',
      headers: bearer(key.key),
      payload: { name: 'Fast Family' },
    });
    familyId = family.json().id;
    for (const [name, birth_date] of [
      ['Ada', '2016-05-01'],
      ['Bo', '2012-09-14'],
    ]) {
      const child = await t.app.inject({
        method: 'POST',
        url: `/api/v1/developer/families/${familyId}/children`,
        headers: bearer(key.key),
        payload: { name, birth_date },
      });
      childId = child.json().id;
    }
  });
  afterEach(async () => t.close());

  const read = (path: string, headers: Record<string, string>, method = 'GET') =>
    fetch(`${t.baseUrl}${path}`, { method, headers });

  /**
   * The route's own answer: a request with a query string is always the router's (the
   * route ignores a parameter it does not declare; fetch drops an empty query).
   */
  const routedAnswer = (path: string, headers: Record<string, string>) =>
    read(`${path}?reference=1`, headers);

  /** A key's usage rows, with what is buffered written first. */
  async function usageOf(org: string, keyId: string): Promise<unknown[]> {
    await t.app.flushUsage();
    const usage = await t.app.inject({
      url: `/api/v1/developers/orgs/${org}/usage?key_id=${keyId}`,
      headers: owner.auth,
    });
    expect(usage.statusCode).toBe(200);
    return usage.json();
  }

  it('answers like the route: same bytes and headers, one bucket, usage and an access line', async () => {
    const paths = [
      `/api/v1/developer/families/${familyId}/children`,
      `/api/v1/families/${familyId}/children`,
      `/api/v1/developer/families/${familyId}`,
      `/api/v1/families/${familyId}`,
      `/api/v1/developer/children/${childId}`,
      `/api/v1/children/${childId}`,
    ];
    // The key is in memory: it made the family and the children.
    expect((await read(paths[0] as string, bearer(key.key))).status).toBe(200);
    expect(routed).toHaveLength(0);
    for (const path of paths) {
      const reference = await routedAnswer(path, bearer(key.key));
      const fast = await read(path, { ...bearer(key.key), 'x-request-id': 'keyed-read-1' });
      expect(fast.headers.get('x-request-id')).toBe('keyed-read-1');
      // One bucket across both paths: each answer took exactly one request from the window.
      expect(Number(fast.headers.get('x-ratelimit-remaining'))).toBe(
        Number(reference.headers.get('x-ratelimit-remaining')) - 1,
      );
      await expectSameAnswer(fast, reference, path);
    }
    // Six references routed (their query string), six reads answered ahead of the router.
    expect(routed).toHaveLength(6);
    const children = (await (await read(paths[0] as string, bearer(key.key))).json()) as Array<{
      name: string;
    }>;
    expect(children.map((child) => child.name).sort()).toEqual(['Ada', 'Bo']);

    // Counted in the key's usage like any routed request, under the route's pattern: the
    // two children made (POST, the same pattern), two reads routed and two answered ahead.
    expect(await usageOf(orgId, key.id)).toContainEqual(
      expect.objectContaining({
        endpoint: '/api/v1/developer/families/{familyID}/children',
        status_2xx: 6,
        total_requests: 6,
      }),
    );
    // And one access line each, the same fields as the route's line.
    const lines = t.logs.filter((line) => line.msg === 'request completed');
    const routedLine = lines.find(
      (line) => line.path === paths[0] && line.reqId !== 'keyed-read-1',
    );
    const fastLine = lines.find((line) => line.reqId === 'keyed-read-1');
    expect(fastLine).toMatchObject({
      method: 'GET',
      route: '/api/v1/developer/families/:familyID/children',
      path: paths[0],
      status: 200,
    });
    expect(Object.keys(fastLine ?? {}).sort()).toEqual(Object.keys(routedLine ?? {}).sort());
  });

  it('answers a family it does not show as the route does: the same 404, counted', async () => {
    const otherOrg = (await createOrg(t.app, owner, 'Other')).id;
    const stranger = await mintKey(t.app, owner, otherOrg);
    const unknown = '00000000-0000-4000-8000-000000000000';
    // Into memory first, through the route.
    expect((await read('/api/v1/developer/platforms?a=1', bearer(stranger.key))).status).toBe(200);
    const before = routed.length;
    for (const path of [
      `/api/v1/developer/families/${familyId}/children`,
      `/api/v1/developer/families/${unknown}`,
      `/api/v1/developer/children/${unknown}`,
    ]) {
      const reference = await routedAnswer(path, bearer(stranger.key));
      expect(reference.status, path).toBe(404);
      const fast = await read(path, bearer(stranger.key));
      await expectSameAnswer(fast, reference, path);
    }
    expect(routed.length - before).toBe(3);
    // Each 404 counted once, whichever path answered it.
    expect(await usageOf(otherOrg, stranger.id)).toContainEqual(
      expect.objectContaining({
        endpoint: '/api/v1/developer/families/{familyID}/children',
        status_2xx: 0,
        status_4xx: 2,
        total_requests: 2,
      }),
    );
  });

  it('leaves what it does not fully know to the route', async () => {
    const path = `/api/v1/developer/families/${familyId}/children`;
    expect((await read(path, bearer(key.key))).status).toBe(200);
    expect(routed).toHaveLength(0);

    // A key without the route's scope: the route's 403.
    const narrow = await mintKey(t.app, owner, orgId, { scopes: ['read:platforms'] });
    await expectScopeRefusedTwice(() => read(path, bearer(narrow.key)), 'read:children');
    expect(routed).toHaveLength(2);

    // Ids it does not read itself: upper case (valid, the route reads it), malformed (400).
    expect(
      (await read(path.replace(familyId, familyId.toUpperCase()), bearer(key.key))).status,
    ).toBe(200);
    expect((await read(path.replace(familyId, 'not-a-uuid'), bearer(key.key))).status).toBe(400);
    // A proxy's client address, HEAD, a session (which sees no org's family: the route's 403).
    const proxied = await read(path, { ...bearer(key.key), 'x-forwarded-for': '203.0.113.7' });
    expect(proxied.status).toBe(200);
    expect((await read(path, bearer(key.key), 'HEAD')).status).toBe(200);
    expect((await read(`/api/v1/families/${familyId}/children`, owner.auth)).status).toBe(403);
    expect(routed).toHaveLength(7);

    // Revoked: gone from memory at once, and the route says so.
    const revoked = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/developers/orgs/${orgId}/keys/${key.id}`,
      headers: owner.auth,
    });
    expect(revoked.statusCode, revoked.body).toBeLessThan(300);
    const gone = await read(path, bearer(key.key));
    expect(gone.status).toBe(401);
    expect(await gone.json()).toMatchObject({ message: 'API key has been revoked' });
    expect(routed).toHaveLength(8);
  });

  it('holds a drain while a read is in hand, and answers it', async () => {
    const item = '11111111-1111-4111-8111-111111111111';
    const path = GATED.replace(':itemID', item);
    expect((await read(path, bearer(key.key))).status).toBe(200);
    expect(routed).toHaveLength(0);

    gated.state.armed = true;
    const inHand = read(path, bearer(key.key));
    await gated.state.entered;
    const drained = t.app.drain(60_000);
    const pending = Symbol('pending');
    const settled = () => Promise.race([drained.then(() => 'drained'), Promise.resolve(pending)]);
    expect(await settled()).toBe(pending);

    gated.state.release();
    const answer = await inHand;
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ id: item });
    await drained;
    // It was answered ahead of the router, and what comes after the drain is refused there.
    expect(routed).toHaveLength(0);
    const late = await read(path, bearer(key.key));
    expect(late.status).toBe(503);
    expect(routed).toHaveLength(1);
  });
});
