import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import type { Session } from '../../../test/identity.js';
import { JwksServer, newSigningKey, signSession } from '../../../test/jwks-server.js';
import { productionEnv } from '../../../test/production.js';
import { eventually } from '../../../test/tcp-proxy.js';
import { WebhookReceiver } from '../../../test/webhook-receiver.js';
import { type ResolvedAddress, systemResolver } from './address-guard.js';

const ISS = 'https://id.example.test/';
const PUBLIC: ResolvedAddress = { address: '93.184.216.34', family: 4 };

/**
 * What host names resolve to, decided by the test (no DNS server of ours to rebind):
 * `localhost` as the machine resolves it, the rest from this table, anything else unknown.
 */
const names = new Map<string, ResolvedAddress[]>([
  ['hooks.example.com', [PUBLIC]],
  ['mixed.example.com', [PUBLIC, { address: '10.0.0.5', family: 4 }]],
  ['rebind.example.com', [PUBLIC]],
]);
async function resolve(host: string): Promise<ResolvedAddress[]> {
  if (host === 'localhost') {
    return systemResolver(host);
  }
  const found = names.get(host);
  if (!found) {
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  }
  return found;
}

describe('webhooks in production', () => {
  const jwks = new JwksServer();
  let key: Awaited<ReturnType<typeof newSigningKey>>;
  beforeAll(async () => {
    await jwks.start();
    key = await newSigningKey('prod-webhooks');
    jwks.keys.push(key.jwk);
  });
  afterAll(() => jwks.stop());

  async function productionApp(extra: Record<string, string> = {}) {
    const t = await buildTestApp({
      env: { ...productionEnv({ jwksUrl: jwks.url, issuer: ISS }), ...extra },
      tuning: {
        jobPollingIntervalSeconds: 0.5,
        webhookRetryDelaysSeconds: [0, 0, 0, 0, 0, 0, 0],
        webhookResolver: resolve,
      },
    });
    const iat = Math.floor(t.clock.now().getTime() / 1000);
    const token = await signSession(key, {
      iss: ISS,
      sub: `user-${Math.random()}`,
      iat,
      exp: iat + 3600,
    });
    const who: Session = { token, userId: '', auth: { authorization: `Bearer ${token}` } };
    const family = await t.app.inject({
      method: 'POST',
      url: '/api/v1/families',
      headers: who.auth,
      payload: { name: 'Production hooks' },
    });
    expect(family.statusCode, family.body).toBe(201);
    return { t, who, familyId: family.json().id as string };
  }

  describe('with CREDENTIALS_KEY', () => {
    let t: TestApp;
    let who: Session;
    let familyId: string;
    const receiver = new WebhookReceiver();
    const register = (url: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/webhooks',
        headers: who.auth,
        payload: { family_id: familyId, url, events: ['test'] },
      });

    beforeAll(async () => {
      await receiver.start();
      ({ t, who, familyId } = await productionApp({
        CREDENTIALS_KEY: randomBytes(32).toString('base64'),
      }));
    });
    afterAll(async () => {
      await t.close();
      await receiver.stop();
    });

    it('refuses http, and hosts that are or resolve to loopback, private, link-local or metadata addresses', async () => {
      const cases: Array<[string, string]> = [
        ['http://127.0.0.1/h', 'url must use https'],
        ['http://hooks.example.com/h', 'url must use https'],
        ['https://127.0.0.1/h', 'url must not point to a loopback address (127.0.0.1)'],
        [
          'https://169.254.169.254/latest/meta-data',
          'url must not point to a metadata address (169.254.169.254)',
        ],
        ['https://10.0.0.1/h', 'url must not point to a private address (10.0.0.1)'],
        ['https://192.168.1.20/h', 'url must not point to a private address (192.168.1.20)'],
        ['https://100.64.3.4/h', 'url must not point to a shared (CGNAT) address (100.64.3.4)'],
        ['https://169.254.10.1/h', 'url must not point to a link-local address (169.254.10.1)'],
        ['https://0.0.0.0/h', 'url must not point to an unspecified address (0.0.0.0)'],
        ['https://[::1]/h', 'url must not point to a loopback address (::1)'],
        ['https://[fd00:ec2::254]/h', 'url must not point to a metadata address (fd00:ec2::254)'],
        ['https://[fe80::1]/h', 'url must not point to a link-local address (fe80::1)'],
        [
          'https://[::ffff:127.0.0.1]/h',
          'url must not point to a loopback address (::ffff:7f00:1)',
        ],
        [
          'https://mixed.example.com/h',
          'url must not point to a private address (mixed.example.com resolves to 10.0.0.5)',
        ],
        ['https://nowhere.example.com/h', 'url host nowhere.example.com does not resolve'],
      ];
      for (const [url, message] of cases) {
        const res = await register(url);
        expect(res.statusCode, url).toBe(400);
        expect(res.json().message, url).toBe(message);
      }
      const local = await register('https://localhost/h');
      expect(local.statusCode).toBe(400);
      expect(local.json().message).toMatch(
        /^url must not point to a loopback address \(localhost resolves to (127\.0\.0\.1|::1)\)$/,
      );

      const ok = await register('https://hooks.example.com/h');
      expect(ok.statusCode, ok.body).toBe(201);
      const moved = await t.app.inject({
        method: 'PATCH',
        url: `/api/v1/webhooks/${ok.json().id}`,
        headers: who.auth,
        payload: { url: 'https://10.0.0.1/h' },
      });
      expect(moved.statusCode).toBe(400);
      expect(moved.json().message).toBe('url must not point to a private address (10.0.0.1)');
    });

    it('refuses again at delivery time, on the address the delivery would connect to', async () => {
      const created = await register(`https://rebind.example.com:${receiver.port}/h`);
      expect(created.statusCode, created.body).toBe(201);
      const { id } = created.json();
      // The name now points inside (DNS rebinding, or a record changed after registration).
      names.set('rebind.example.com', [{ address: '127.0.0.1', family: 4 }]);
      const queued = await t.app.inject({
        method: 'POST',
        url: `/api/v1/webhooks/${id}/test`,
        headers: who.auth,
      });
      expect(queued.statusCode).toBe(202);
      const first = queued.json().id as string;
      await eventually(async () => {
        const row = await t.database.handle.db
          .selectFrom('webhook_deliveries')
          .select('status')
          .where('id', '=', first)
          .executeTakeFirstOrThrow();
        return row.status !== 'pending';
      }, 'the first attempt');
      const attempts = await t.app.inject({
        url: `/api/v1/webhooks/${id}/deliveries?limit=100`,
        headers: who.auth,
      });
      const attempt = attempts.json().find((d: { id: string }) => d.id === first);
      expect(attempt).toMatchObject({
        status: 'failed',
        response_code: null,
        error:
          'refused: url must not point to a loopback address (rebind.example.com resolves to 127.0.0.1)',
      });
      expect(receiver.received).toEqual([]);
    });

    it('refuses a stored literal address at delivery time too', async () => {
      const created = await register('https://hooks.example.com/h');
      const { id } = created.json();
      // As a row written before the rules existed would hold it.
      await t.database.handle.db
        .updateTable('webhooks')
        .set({ url: `https://127.0.0.1:${receiver.port}/h` })
        .where('id', '=', id)
        .execute();
      const queued = await t.app.inject({
        method: 'POST',
        url: `/api/v1/webhooks/${id}/test`,
        headers: who.auth,
      });
      const first = queued.json().id as string;
      let error: string | null = null;
      await eventually(async () => {
        const row = await t.database.handle.db
          .selectFrom('webhook_deliveries')
          .select(['status', 'error'])
          .where('id', '=', first)
          .executeTakeFirstOrThrow();
        error = row.error;
        return row.status !== 'pending';
      }, 'the first attempt');
      expect(error).toBe('refused: url must not point to a loopback address (127.0.0.1)');
      expect(receiver.received).toEqual([]);
    });
  });
});
