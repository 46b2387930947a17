// `npm run admin -- reseal-credentials`, run as the real command on the storage the apps use
// (PostgreSQL on that backend's run, an embedded data directory otherwise): values sealed
// under one CREDENTIALS_KEY are sealed again with the first of a new list, after which apps
// given only the new key still use every one of them, through the API.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStorage } from '../src/db/storage.js';
import { createCredentialCipher, keyIdOf } from '../src/modules/connections/credential-cipher.js';
import { describeCounts, resealCredentials } from '../src/modules/connections/reseal.js';
import {
  findSealed,
  replaceSealed,
  SEALED_COLUMNS,
  sealedWithOtherKeys,
} from '../src/modules/connections/reseal-store.js';
import { buildTestApp, type TestApp } from './app.js';
import { runCli } from './cli.js';
import { TestClock } from './clock.js';
import { createTestDatabase, newDataDir, type TestDatabase } from './database.js';
import { longSession, newSession, type Session } from './identity.js';
import { JwksServer, newSigningKey, signSession } from './jwks-server.js';
import {
  type Api,
  type Doubles,
  enforce,
  expectedNextDns,
  NEXTDNS_KEY,
  NEXTDNS_PROFILE,
  nextdnsState,
  resultFor,
  setUpFamily,
  startDoubles,
} from './live-partners.js';
import { productionEnv } from './production.js';
import { eventually } from './tcp-proxy.js';
import { WebhookReceiver } from './webhook-receiver.js';

const newKey = () => randomBytes(32).toString('base64');
const ISS = 'https://id.example.test/';
const XBOX_CREDENTIALS = { gamertag: 'Resealed Otter', token: 'xbl-token-5f1d0c2e' };

/**
 * The storage the apps and the command share, opened by one at a time: PostgreSQL (a
 * database of this run) on that backend's run, else a data directory on disk (the command is
 * its own process, and embedded storage has one owner).
 */
async function sharedStorage(): Promise<{
  /** What the command is given to find the storage. */
  env: Record<string, string>;
  open(): Promise<{ database: TestDatabase; close(): Promise<void> }>;
  drop(): Promise<void>;
}> {
  const database = await createTestDatabase();
  if (database.url) {
    return {
      env: { DATABASE_URL: database.url },
      open: async () => ({ database, close: async () => {} }),
      drop: () => database.drop(),
    };
  }
  await database.drop();
  const dataDir = newDataDir('reseal');
  return {
    env: { DATA_DIR: dataDir },
    open: async () => {
      const storage = await openStorage({ databaseUrl: undefined, dataDir });
      const opened: TestDatabase = { handle: storage.database, drop: () => storage.close() };
      return { database: opened, close: () => storage.close() };
    },
    drop: async () => rmSync(dataDir, { recursive: true, force: true }),
  };
}

type Storage = Awaited<ReturnType<typeof sharedStorage>>;

function reseal(storage: Storage, credentialsKey?: string) {
  return runCli('admin', ['reseal-credentials'], {
    ...storage.env,
    ...(credentialsKey === undefined ? {} : { CREDENTIALS_KEY: credentialsKey }),
  });
}

function counts(
  connections: [number, number],
  webhooks: [number, number],
  releases: [number, number],
) {
  const kind = (name: string, [resealed, current]: [number, number]) =>
    `${name} ${resealed} resealed, ${current} already current`;
  return [
    kind('connections', connections),
    kind('webhooks', webhooks),
    kind('erasure releases', releases),
  ].join('; ');
}

describe('npm run admin -- reseal-credentials', () => {
  const clock = new TestClock(new Date());
  const receiver = new WebhookReceiver();
  const jwks = new JwksServer();
  let signingKey: Awaited<ReturnType<typeof newSigningKey>>;
  let doubles: Doubles;

  beforeAll(async () => {
    await Promise.all([receiver.start(), jwks.start()]);
    signingKey = await newSigningKey('reseal');
    jwks.keys.push(signingKey.jwk);
    doubles = await startDoubles();
  });
  afterAll(async () => {
    await Promise.all([receiver.stop(), jwks.stop(), doubles.stop()]);
  });

  /** An app on the shared storage for the length of `work`, closed before the command runs. */
  async function withApp<T>(
    storage: Storage,
    env: Record<string, string>,
    work: (t: TestApp) => Promise<T>,
  ): Promise<T> {
    const { database, close } = await storage.open();
    const t = await buildTestApp({
      database,
      clock,
      env,
      tuning: {
        jobPollingIntervalSeconds: 0.5,
        webhookRetryDelaysSeconds: [0, 0, 0, 0, 0, 0, 0],
        partnerHttp: { timeoutMs: 2_000, backoffMs: 20, maxRetries: 2 },
      },
    });
    try {
      return await work(t);
    } finally {
      await t.close();
      await close();
    }
  }

  const productionApp = (key: string) => ({
    ...productionEnv({ jwksUrl: jwks.url, issuer: ISS }),
    ...doubles.env,
    CREDENTIALS_KEY: key,
  });

  function productionApi(t: TestApp, token: string): Api {
    return async (method, path, body) => {
      const res = await t.app.inject({
        method: method as 'GET',
        url: path,
        headers: { authorization: `Bearer ${token}` },
        ...(body === undefined ? {} : { payload: body as object }),
      });
      return { status: res.statusCode, body: res.body === '' ? undefined : res.json() };
    };
  }

  function call(t: TestApp, who: Session, method: string, url: string, payload?: object) {
    return t.app.inject({
      method: method as 'GET',
      url: `/api/v1${url}`,
      headers: who.auth,
      ...(payload ? { payload } : {}),
    });
  }

  async function registerWebhook(t: TestApp, who: Session, familyId: string) {
    const created = await call(t, who, 'POST', '/webhooks', {
      family_id: familyId,
      url: receiver.url,
      events: ['test'],
    });
    expect(created.statusCode, created.body).toBe(201);
    return created.json() as { id: string; secret: string };
  }

  /** A test delivery reaches the receiver, signed with `secret` (the one shown at creation). */
  async function expectSignedDelivery(t: TestApp, who: Session, id: string, secret: string) {
    const before = receiver.received.length;
    const queued = await call(t, who, 'POST', `/webhooks/${id}/test`);
    expect(queued.statusCode, queued.body).toBe(202);
    await eventually(async () => receiver.received.length > before, 'the test delivery');
    const request = receiver.received[before];
    expect(request).toBeDefined();
    const verified = new Webhook(secret).verify(
      request?.body ?? '',
      request?.headers as Record<string, string>,
    );
    expect(verified).toMatchObject({ type: 'test', data: { webhook_id: id } });
  }

  it('seals every value under key A again with key B, after which B alone opens them all', async () => {
    const storage = await sharedStorage();
    const [A, B, C] = [newKey(), newKey(), newKey()];
    try {
      // Under A, in production: a family whose NextDNS connection holds its API key.
      doubles.reset();
      const iat = Math.floor(clock.now().getTime() / 1000);
      const token = await signSession(signingKey, {
        iss: ISS,
        sub: 'rotator',
        iat,
        exp: iat + 7200,
      });
      const partnerFamily = await withApp(storage, productionApp(A), async (t) => {
        const api = productionApi(t, token);
        const family = await setUpFamily(api);
        const connected = await api('POST', `/api/v1/families/${family.familyId}/connections`, {
          platform_id: 'nextdns',
          credentials: { api_key: NEXTDNS_KEY, profile_id: NEXTDNS_PROFILE },
        });
        expect(connected.status, JSON.stringify(connected.body)).toBe(201);
        return family;
      });

      // Under A, in the sandbox, queueing only (so the erasure's release waits): a connection
      // with credentials, a webhook, and a child's erasure holding its release material.
      const sandbox = await withApp(storage, { CREDENTIALS_KEY: A, WORKERS: 'off' }, async (t) => {
        const owner = await longSession(t);
        const setup = await call(t, owner, 'POST', '/setup/quick', {
          child_name: 'Kit',
          birth_date: '2016-01-01',
        });
        expect(setup.statusCode, setup.body).toBe(201);
        const familyId = setup.json().family.id as string;
        const connected = await call(t, owner, 'POST', `/families/${familyId}/connections`, {
          platform_id: 'xbox',
          credentials: XBOX_CREDENTIALS,
        });
        expect(connected.statusCode, connected.body).toBe(201);
        const webhook = await registerWebhook(t, owner, familyId);
        const erased = await call(t, owner, 'DELETE', `/children/${setup.json().child.id}`);
        expect(erased.statusCode, erased.body).toBe(204);
        return { owner, webhook, erasureId: erased.headers['haven-erasure-id'] as string };
      });

      const first = await reseal(storage, `${B},${A}`);
      expect(first.stderr).toBe('');
      expect(first.code).toBe(0);
      expect(first.stdout.trim()).toBe(counts([2, 0], [1, 0], [1, 0]));

      const second = await reseal(storage, `${B},${A}`);
      expect(second.stderr).toBe('');
      expect(second.code).toBe(0);
      expect(second.stdout.trim()).toBe(counts([0, 2], [0, 1], [0, 1]));

      // A key list that no longer holds B: nothing it could do, every kind named, no value shown.
      const missing = await reseal(storage, `${C},${A}`);
      expect(missing.code).toBe(1);
      expect(missing.stdout.trim()).toBe(counts([0, 0], [0, 0], [0, 0]));
      const stale = `sealed with key ${keyIdOf(Buffer.from(B, 'base64'))}, which is not configured`;
      expect(missing.stderr.trim().split('\n')).toEqual([
        `haven admin: connections: 2 ${stale}; webhooks: 1 ${stale}; erasure releases: 1 ${stale}` +
          ' (CREDENTIALS_KEY must still list every key values were sealed with, after the new one)',
      ]);
      for (const secret of [sandbox.webhook.secret, NEXTDNS_KEY, XBOX_CREDENTIALS.token, A, B, C]) {
        for (const output of [first, second, missing]) {
          expect(output.stdout + output.stderr).not.toContain(secret);
        }
      }

      // B alone, in the sandbox: the release opens and runs, the webhook signs as it did.
      await withApp(storage, { CREDENTIALS_KEY: B }, async (t) => {
        // Waited for in the database: polling the API would meet the session's rate limit.
        await eventually(async () => {
          const row = await t.database.handle.db
            .selectFrom('erasure_receipts')
            .select('completed_at')
            .where('id', '=', sandbox.erasureId)
            .executeTakeFirst();
          return row?.completed_at != null;
        }, 'the erasure release to end');
        const read = await call(t, sandbox.owner, 'GET', `/erasures/${sandbox.erasureId}`);
        expect(read.statusCode, read.body).toBe(200);
        const receipt = read.json();
        expect(receipt?.releases).toEqual([{ platform_id: 'xbox', status: 'released' }]);
        await expectSignedDelivery(t, sandbox.owner, sandbox.webhook.id, sandbox.webhook.secret);
      });

      // B alone, in production: enforcement opens the NextDNS credentials and uses them.
      await withApp(storage, productionApp(B), async (t) => {
        const job = await enforce(productionApi(t, token), partnerFamily.childId);
        expect(job.status, JSON.stringify(job)).toBe('completed');
        expect(resultFor(job, 'nextdns').status, JSON.stringify(job)).toBe('success');
        expect(nextdnsState(doubles)).toEqual(expectedNextDns());
      });
    } finally {
      await storage.drop();
    }
  });

  it('moves a sandbox off the key it generated, and refuses without CREDENTIALS_KEY', async () => {
    const storage = await sharedStorage();
    const B = newKey();
    try {
      const made = await withApp(storage, {}, async (t) => {
        const owner = await longSession(t);
        const family = await call(t, owner, 'POST', '/families', { name: 'Generated key' });
        expect(family.statusCode, family.body).toBe(201);
        return { owner, webhook: await registerWebhook(t, owner, family.json().id) };
      });

      const refused = await reseal(storage);
      expect(refused.code).toBe(1);
      expect(refused.stdout).toBe('');
      expect(refused.stderr.trim()).toBe(
        'haven admin: CREDENTIALS_KEY is not set: values are sealed with the key this sandbox ' +
          'generated and keeps in its database; set CREDENTIALS_KEY to the key to reseal them ' +
          'with, then run again',
      );

      const moved = await reseal(storage, B);
      expect(moved.stderr).toBe('');
      expect(moved.code).toBe(0);
      expect(moved.stdout.trim()).toBe(counts([0, 0], [1, 0], [0, 0]));

      await withApp(storage, { CREDENTIALS_KEY: B }, (t) =>
        expectSignedDelivery(t, made.owner, made.webhook.id, made.webhook.secret),
      );
    } finally {
      await storage.drop();
    }
  });

  it('never overwrites a value a server sealed after the command read it', async () => {
    const [A, B] = [newKey(), newKey()];
    const t = await buildTestApp({ env: { CREDENTIALS_KEY: A } });
    try {
      const owner = await newSession(t.app);
      const family = await call(t, owner, 'POST', '/families', { name: 'Racing renewal' });
      const connection = await call(t, owner, 'POST', `/families/${family.json().id}/connections`, {
        platform_id: 'xbox',
        credentials: { token: 'first' },
      });
      expect(connection.statusCode, connection.body).toBe(201);
      const id = connection.json().id as string;
      const db = t.database.handle.db;
      const column = SEALED_COLUMNS.connections;
      const [read] = await sealedWithOtherKeys(
        db,
        column,
        keyIdOf(Buffer.from(B, 'base64')),
        undefined,
        10,
      );
      expect(read?.id).toBe(id);
      if (!read) {
        throw new Error('nothing read');
      }

      // A server renews the credentials between the command's read and its write.
      const renewed = await call(t, owner, 'PATCH', `/connections/${id}`, {
        credentials: { token: 'second' },
      });
      expect(renewed.statusCode, renewed.body).toBe(200);
      const onlyB = createCredentialCipher([Buffer.from(B, 'base64')]);
      expect(await replaceSealed(db, column, read, onlyB.seal({ token: 'first' }, id))).toBe(false);

      // The renewal stands, and a run reseals it (the newer value) in turn.
      const keys = { sealWith: Buffer.from(B, 'base64'), openWith: [Buffer.from(A, 'base64')] };
      expect(describeCounts(await resealCredentials(db, keys))).toBe(
        counts([1, 0], [0, 0], [0, 0]),
      );
      const stored = await findSealed(db, column, id);
      expect(stored && onlyB.open(stored, id)).toEqual({ token: 'second' });
    } finally {
      await t.close();
    }
  });
});
