// Erasure on NextDNS and Control D (CONTRACT.md §11.4, §12.3) in a production app, against
// the local doubles of both partners: the erasure's own job releases each profile (Haven's
// entries gone, its settings back, the parent's own kept) with the credentials it holds
// sealed, and once it has ended neither the credentials nor their sealed forms are stored
// anywhere in the database.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { TestClock } from '../../../test/clock.js';
import { createTestDatabase, type TestDatabase } from '../../../test/database.js';
import { findStored } from '../../../test/database-scan.js';
import { JwksServer, newSigningKey, signSession } from '../../../test/jwks-server.js';
import {
  type Api,
  CONTROLD_TOKEN,
  connectPartners,
  controldState,
  type Doubles,
  enforce,
  expectedControlD,
  expectedNextDns,
  NEXTDNS_KEY,
  nextdnsState,
  setUpFamily,
  startDoubles,
} from '../../../test/live-partners.js';
import { productionEnv } from '../../../test/production.js';
import { eventually } from '../../../test/tcp-proxy.js';

const ISS = 'https://id.example.test/';

/** What a release leaves: the parent's own entries, nothing of Haven's. */
const RELEASED_NEXTDNS = {
  parentalControl: {
    safeSearch: false,
    youtubeRestrictedMode: false,
    blockBypass: false,
    services: [{ id: 'fortnite', active: false, recreation: true }],
    categories: [],
  },
  denylist: [{ id: 'parent-own.example', active: true }],
  allowlist: [],
  blocklists: [],
};
// Control D deletes no service: Haven's are switched off.
const RELEASED_CONTROLD = {
  filters: ['iot'],
  services: { tiktok: { do: 0, status: 0 }, roblox: { do: 0, status: 0 } },
  rules: { 'parent-own.example': { do: 1, status: 1, group: 0 } },
  default: null,
  options: [],
};

interface Receipt {
  completed_at: string | null;
  releases: Array<{ platform_id: string; status: string }>;
  erased: Record<string, number>;
  signature: string | null;
}

describe('erasure on NextDNS and Control D (production)', () => {
  const jwks = new JwksServer();
  const clock = new TestClock();
  let doubles: Doubles;
  let database: TestDatabase;
  let session = '';
  let sub = 0;
  let newParent: () => Promise<void>;

  /** The production app on the test's database: with workers, or queueing only. */
  const build = (workers: boolean) =>
    buildTestApp({
      database,
      clock,
      env: {
        ...productionEnv({ jwksUrl: jwks.url, issuer: ISS }),
        ...doubles.env,
        ...(workers ? {} : { WORKERS: 'off' }),
      },
      tuning: { partnerHttp: { timeoutMs: 2_000, backoffMs: 20, maxRetries: 2 } },
    });

  const apiOf =
    (t: TestApp): Api =>
    async (method, path, body) => {
      const res = await t.app.inject({
        method: method as 'GET',
        url: path,
        headers: { authorization: `Bearer ${session}` },
        ...(body === undefined ? {} : { payload: body as object }),
      });
      return { status: res.statusCode, body: res.body === '' ? undefined : res.json() };
    };

  /** A DELETE that erases: its status and the erasure's id. */
  async function erase(t: TestApp, path: string) {
    const res = await t.app.inject({
      method: 'DELETE',
      url: path,
      headers: { authorization: `Bearer ${session}` },
    });
    expect(res.statusCode, res.body).toBe(204);
    return res.headers['haven-erasure-id'] as string;
  }

  beforeAll(async () => {
    await jwks.start();
    const key = await newSigningKey('live-erasure');
    jwks.keys.push(key.jwk);
    doubles = await startDoubles();
    database = await createTestDatabase();
    const iat = Math.floor(clock.now().getTime() / 1000);
    newParent = async () => {
      session = await signSession(key, { iss: ISS, sub: `eraser-${++sub}`, iat, exp: iat + 3600 });
    };
  });
  afterAll(async () => {
    await database.drop();
    await doubles.stop();
    await jwks.stop();
  });

  /** A family whose profiles hold the policy Haven enforced, beside the parent's own. */
  async function enforcedFamily(api: Api) {
    doubles.reset();
    await newParent();
    const family = await setUpFamily(api);
    const connections = await connectPartners(api, family.familyId);
    expect((await enforce(api, family.childId)).status).toBe('completed');
    expect(nextdnsState(doubles)).toEqual(expectedNextDns());
    expect(controldState(doubles)).toEqual(expectedControlD());
    return { ...family, connections };
  }

  async function completedReceipt(api: Api, id: string): Promise<Receipt> {
    let receipt: Receipt | undefined;
    await eventually(
      async () => {
        receipt = (await api('GET', `/api/v1/erasures/${id}`)).body;
        return receipt?.completed_at !== null;
      },
      'the erasure to complete',
      30_000,
    );
    return receipt as Receipt;
  }

  async function sealedCredentials(connectionIds: string[]): Promise<Buffer[]> {
    const rows = await database.handle.db
      .selectFrom('family_connections')
      .select('credentials')
      .where('id', 'in', connectionIds)
      .execute();
    return rows.map((row) => Buffer.from(row.credentials as Buffer));
  }

  it("a family's erasure releases both profiles from its sealed job, then forgets the credentials", async () => {
    let t = await build(true);
    const family = await enforcedFamily(apiOf(t));
    const connectionSealed = await sealedCredentials(Object.values(family.connections));
    await t.app.close();

    // Erased while no worker runs: what the release needs waits, sealed, in one row.
    t = await build(false);
    const erasureId = await erase(t, `/api/v1/families/${family.familyId}`);
    const db = database.handle.db;
    const secret = await sql<{ sealed: Buffer }>`
      select sealed from erasure_release_secrets where erasure_id = ${erasureId}`.execute(db);
    const blob = Buffer.from(secret.rows[0]?.sealed as Buffer);
    expect(
      await findStored(db, { texts: [NEXTDNS_KEY, CONTROLD_TOKEN], bytes: connectionSealed }),
    ).toEqual([]);
    expect((await findStored(db, { bytes: [blob] })).map((found) => found.table)).toEqual([
      'public.erasure_release_secrets',
    ]);
    expect(nextdnsState(doubles)).toEqual(expectedNextDns());
    const pending = (await apiOf(t)('GET', `/api/v1/erasures/${erasureId}`)).body as Receipt;
    expect(pending).toMatchObject({
      completed_at: null,
      signature: null,
      releases: [
        { platform_id: 'controld', status: 'pending' },
        { platform_id: 'nextdns', status: 'pending' },
      ],
    });
    expect(pending.erased).toMatchObject({ family_connections: 2, partner_managed_state: 2 });
    await t.app.close();

    t = await build(true);
    try {
      const receipt = await completedReceipt(apiOf(t), erasureId);
      expect(receipt.releases).toEqual([
        { platform_id: 'controld', status: 'released' },
        { platform_id: 'nextdns', status: 'released' },
      ]);
      expect(receipt.signature).toEqual(expect.any(String));
      expect(nextdnsState(doubles)).toEqual(RELEASED_NEXTDNS);
      expect(controldState(doubles)).toEqual(RELEASED_CONTROLD);
      expect(doubles.nextdns.undocumented).toEqual([]);
      expect(doubles.controld.undocumented).toEqual([]);
      // The job ended: the credentials are stored nowhere, in no form, job queue included.
      expect(
        await findStored(db, {
          texts: [NEXTDNS_KEY, CONTROLD_TOKEN],
          bytes: [blob, ...connectionSealed],
        }),
      ).toEqual([]);
      // And were never written to a log line.
      expect(t.rawLogs.filter((line) => line.includes(NEXTDNS_KEY))).toEqual([]);
    } finally {
      await t.app.close();
    }
  });

  it("a child's erasure releases both profiles; the family keeps its connections", async () => {
    const t = await build(true);
    try {
      const api = apiOf(t);
      const family = await enforcedFamily(api);
      const erasureId = await erase(t, `/api/v1/children/${family.childId}`);
      const receipt = await completedReceipt(api, erasureId);
      expect(receipt.releases).toEqual([
        { platform_id: 'controld', status: 'released' },
        { platform_id: 'nextdns', status: 'released' },
      ]);
      expect(receipt.erased).toMatchObject({ children: 1, partner_managed_state: 2 });
      expect(nextdnsState(doubles)).toEqual(RELEASED_NEXTDNS);
      expect(controldState(doubles)).toEqual(RELEASED_CONTROLD);

      // The connections are the family's: still there, still connected, and their profiles
      // hold nothing of Haven's on record.
      const listed = await api('GET', `/api/v1/families/${family.familyId}/connections`);
      expect(listed.body.map((c: { status: string }) => c.status)).toEqual([
        'connected',
        'connected',
      ]);
      const states = await database.handle.db
        .selectFrom('partner_managed_state')
        .select('state')
        .where('connection_id', 'in', Object.values(family.connections))
        .execute();
      for (const { state } of states) {
        expect(typeof state === 'string' ? JSON.parse(state) : state).toEqual({
          items: [],
          settings: {},
        });
      }
      const db = database.handle.db;
      expect(await findStored(db, { texts: [NEXTDNS_KEY, CONTROLD_TOKEN] })).toEqual([]);
      const left = await sql<{ n: string | number }>`
        select count(*) as n from erasure_release_secrets`.execute(db);
      expect(Number(left.rows[0]?.n)).toBe(0);
    } finally {
      await t.app.close();
    }
  });
});
