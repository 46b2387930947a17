// The security contract every API-key route honours (spec Authentication rules 2-4, 8;
// CONTRACT.md §2-§3). A key route joins by calling describeKeyAuthContract with its request.
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './app.js';
import {
  bearer,
  createOrg,
  type MintedKey,
  mintKey,
  newSession,
  type Session,
} from './identity.js';

export interface KeyRouteUnderTest {
  /** e.g. 'GET /api/v1/developer/families' */
  name: string;
  scope: string;
  /** The request, made for the org that owns `key` (ids of that org's resources). */
  request(fixture: KeyFixture): Promise<InjectOptions> | InjectOptions;
  /** Status of a successful call. */
  okStatus: number;
  /** Another org's resource seen with this org's key: 404 for id routes. */
  foreignRequest?(fixture: KeyFixture): Promise<InjectOptions> | InjectOptions;
}

export interface KeyFixture {
  app: FastifyInstance;
  t: TestApp;
  owner: Session;
  orgId: string;
  key: MintedKey;
  otherOwner: Session;
  otherOrgId: string;
  otherKey: MintedKey;
}

function withHeaders(options: InjectOptions, headers: Record<string, string>): InjectOptions {
  const base = { ...(options.headers as Record<string, string> | undefined) };
  delete base.authorization;
  delete base['x-api-key'];
  return { ...options, headers: { ...base, ...headers } };
}

export function describeKeyAuthContract(route: KeyRouteUnderTest): void {
  describe(`API-key contract: ${route.name}`, () => {
    const fixture = {} as KeyFixture;
    beforeAll(async () => {
      fixture.t = await buildTestApp();
      fixture.app = fixture.t.app;
      fixture.owner = await newSession(fixture.app);
      fixture.orgId = (await createOrg(fixture.app, fixture.owner)).id;
      fixture.key = await mintKey(fixture.app, fixture.owner, fixture.orgId);
      fixture.otherOwner = await newSession(fixture.app);
      fixture.otherOrgId = (await createOrg(fixture.app, fixture.otherOwner, 'Other')).id;
      fixture.otherKey = await mintKey(fixture.app, fixture.otherOwner, fixture.otherOrgId);
    });
    afterAll(async () => fixture.t.close());

    const call = async (headers: Record<string, string>) =>
      fixture.app.inject(withHeaders(await route.request(fixture), headers));
    const expectError = (
      res: { statusCode: number; json(): unknown },
      code: number,
      message: string,
    ) => {
      expect(res.statusCode).toBe(code);
      expect(res.json()).toMatchObject({ code, message });
    };

    it('works with a valid key, on either header', async () => {
      expect((await call(bearer(fixture.key.key))).statusCode).toBe(route.okStatus);
      expect((await call({ 'x-api-key': fixture.key.key })).statusCode).toBe(route.okStatus);
    });

    it('answers 403 "no API scopes in context" without an svc_ credential', async () => {
      expectError(await call({}), 403, 'no API scopes in context');
      expectError(await call(bearer(fixture.owner.token)), 403, 'no API scopes in context');
      expectError(
        await call({ authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }),
        403,
        'no API scopes in context',
      );
      const viaQuery = await route.request(fixture);
      const url = `${viaQuery.url}${String(viaQuery.url).includes('?') ? '&' : '?'}api_key=${fixture.key.key}`;
      expectError(
        await fixture.app.inject(withHeaders({ ...viaQuery, url }, {})),
        403,
        'no API scopes in context',
      );
    });

    it('answers 401 "invalid API key" for an unknown or malformed key, on either header', async () => {
      const unknown = `svc_test_${'A'.repeat(40)}`;
      for (const secret of [unknown, 'svc_test_short', 'svc_', `svc_other_${'a'.repeat(40)}`]) {
        expectError(await call(bearer(secret)), 401, 'invalid API key');
        expectError(await call({ 'x-api-key': secret }), 401, 'invalid API key');
      }
    });

    it('lets Authorization win over X-Api-Key', async () => {
      const bad = `svc_test_${'B'.repeat(40)}`;
      expectError(
        await call({ ...bearer(bad), 'x-api-key': fixture.key.key }),
        401,
        'invalid API key',
      );
      expect((await call({ ...bearer(fixture.key.key), 'x-api-key': bad })).statusCode).toBe(
        route.okStatus,
      );
    });

    it('refuses a live key on a sandbox deployment', async () => {
      const live = await mintKey(fixture.app, fixture.owner, fixture.orgId, {
        environment: 'live',
      });
      expect(live.key.startsWith('svc_live_')).toBe(true);
      expectError(await call(bearer(live.key)), 401, 'invalid API key');
    });

    it('answers 403 naming the scope the key lacks', async () => {
      const other = route.scope.startsWith('read:') ? 'write:webhooks' : 'read:webhooks';
      const narrow = await mintKey(fixture.app, fixture.owner, fixture.orgId, { scopes: [other] });
      expectError(await call(bearer(narrow.key)), 403, `missing required scope: ${route.scope}`);
      const exact = await mintKey(fixture.app, fixture.owner, fixture.orgId, {
        scopes: [route.scope],
      });
      expect((await call(bearer(exact.key))).statusCode).toBe(route.okStatus);
    });

    it('answers 401 "API key has been revoked" on the next request after revocation', async () => {
      const doomed = await mintKey(fixture.app, fixture.owner, fixture.orgId);
      expect((await call(bearer(doomed.key))).statusCode).toBe(route.okStatus);
      const revoke = await fixture.app.inject({
        method: 'DELETE',
        url: `/api/v1/developers/orgs/${fixture.orgId}/keys/${doomed.id}`,
        headers: fixture.owner.auth,
      });
      expect(revoke.statusCode).toBe(204);
      expectError(await call(bearer(doomed.key)), 401, 'API key has been revoked');
    });

    it('answers 401 "API key has expired" once expires_at passes', async () => {
      const expiresAt = new Date(fixture.t.clock.now().getTime() + 60_000);
      const brief = await mintKey(fixture.app, fixture.owner, fixture.orgId, {
        expires_at: expiresAt.toISOString(),
      });
      expect((await call(bearer(brief.key))).statusCode).toBe(route.okStatus);
      fixture.t.clock.advance(60_001);
      expectError(await call(bearer(brief.key)), 401, 'API key has expired');
    });

    if (route.foreignRequest) {
      it("answers 404 for another org's resource", async () => {
        const foreign = await route.foreignRequest?.(fixture);
        const res = await fixture.app.inject(withHeaders(foreign ?? {}, bearer(fixture.key.key)));
        expect(res.statusCode).toBe(404);
      });
    }
  });
}
