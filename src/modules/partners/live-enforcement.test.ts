// Live enforcement on NextDNS and Control D (docs/decisions.md "Converge, by keys") in a
// production app, against local doubles of both partners' APIs: the profiles end as the
// policy says (state, not calls), again and again, through rule changes and removals,
// without touching the parent's own entries, and through every partner error the adapters
// must survive.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { JwksServer, newSigningKey, signSession } from '../../../test/jwks-server.js';
import {
  type Api,
  CONTROLD_PROFILE,
  CONTROLD_TOKEN,
  connectPartners,
  controldState,
  type Doubles,
  enforce,
  expectedControlD,
  expectedNextDns,
  type Job,
  NEXTDNS_KEY,
  NEXTDNS_PROFILE,
  nextdnsState,
  resultFor,
  setUpFamily,
  startDoubles,
} from '../../../test/live-partners.js';
import type { ControlDProfile } from '../../../test/partner-doubles/controld-double.js';
import { productionEnv } from '../../../test/production.js';
import { eventually } from '../../../test/tcp-proxy.js';

/** The categories each partner has a mapping for, among the rules setUpFamily enables. */
const MAPPED = {
  nextdns: [
    'web_filter_level',
    'web_safesearch',
    'targeted_ad_block',
    'time_scheduled_hours',
    'web_category_block',
    'web_custom_blocklist',
    'web_custom_allowlist',
    'app_block_list',
    'content_restricted_mode',
  ],
  controld: [
    'web_filter_level',
    'web_safesearch',
    'targeted_ad_block',
    'web_category_block',
    'web_custom_blocklist',
    'web_custom_allowlist',
    'app_block_list',
    'content_restricted_mode',
  ],
};

const ISS = 'https://id.example.test/';
// Long enough that a double's answer delayed by a busy machine (the doubles and the embedded
// database share this process) is not a partner timeout; the hang fault below outlasts it.
const TIMEOUT_MS = 2_000;

describe('live enforcement on NextDNS and Control D (production)', () => {
  const jwks = new JwksServer();
  let doubles: Doubles;
  let t: TestApp;
  let api: Api;
  let family: Awaited<ReturnType<typeof setUpFamily>>;
  let connections: Awaited<ReturnType<typeof connectPartners>>;
  let sub = 0;

  beforeAll(async () => {
    await jwks.start();
    const key = await newSigningKey('live-partners');
    jwks.keys.push(key.jwk);
    doubles = await startDoubles();
    t = await buildTestApp({
      env: { ...productionEnv({ jwksUrl: jwks.url, issuer: ISS }), ...doubles.env },
      // A partner call may take 2 s here (10 s in production); backoff in milliseconds.
      tuning: { partnerHttp: { timeoutMs: TIMEOUT_MS, backoffMs: 20, maxRetries: 2 } },
    });
    api = async (method, path, body) => {
      // A new parent per test: its own family, so tests never see each other's jobs.
      const res = await t.app.inject({
        method: method as 'GET',
        url: path,
        headers: { authorization: `Bearer ${session}` },
        ...(body === undefined ? {} : { payload: body as object }),
      });
      return { status: res.statusCode, body: res.body === '' ? undefined : res.json() };
    };
    const iat = Math.floor(t.clock.now().getTime() / 1000);
    newParent = async () => {
      session = await signSession(key, { iss: ISS, sub: `parent-${++sub}`, iat, exp: iat + 3600 });
    };
  });
  let session = '';
  let newParent: () => Promise<void>;

  beforeEach(async () => {
    doubles.reset();
    await newParent();
    family = await setUpFamily(api);
    connections = await connectPartners(api, family.familyId);
  });
  // A test leaves no job running: an automatic job of this family finishing during the next
  // test would write this family's policy onto the next test's (same-named) profiles.
  afterEach(async () => {
    await eventually(
      async () => {
        await new Promise((resolve) => setTimeout(resolve, 200));
        const jobs = await api('GET', `/api/v1/children/${family.childId}/enforcement/jobs`);
        return (jobs.body as Array<{ status: string }>).every(
          (job) => !['pending', 'running'].includes(job.status),
        );
      },
      "this test's jobs to finish",
      60_000,
    );
  });
  afterAll(async () => {
    await t.close();
    await doubles.stop();
    await jwks.stop();
  });

  async function enabledCategories(): Promise<string[]> {
    const rules = (await api('GET', `/api/v1/policies/${family.policyId}/rules`)).body as Array<{
      category: string;
      enabled: boolean;
    }>;
    return rules.filter((rule) => rule.enabled).map((rule) => rule.category);
  }

  it('brings both profiles to the policy, counts each rule, and ends completed', async () => {
    const job = await enforce(api, family.childId);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    const enabled = await enabledCategories();
    for (const platform of ['nextdns', 'controld'] as const) {
      const mapped = enabled.filter((category) => MAPPED[platform].includes(category)).length;
      expect(resultFor(job, platform)).toMatchObject({
        status: 'success',
        rules_applied: mapped,
        rules_skipped: enabled.length - mapped,
        rules_failed: 0,
        error_message: null,
      });
    }
    expect(nextdnsState(doubles)).toEqual(expectedNextDns());
    expect(controldState(doubles)).toEqual(expectedControlD());
    // Connecting and enforcing took only routes the partners' references document.
    expect(doubles.nextdns.undocumented).toEqual([]);
    expect(doubles.controld.undocumented).toEqual([]);

    // The schedule drives NextDNS's recreation times; the parent's time zone stays.
    const schedule = (await api('GET', `/api/v1/policies/${family.policyId}/rules`)).body.find(
      (rule: { category: string }) => rule.category === 'time_scheduled_hours',
    ).config.schedule;
    const recreation = doubles.nextdns.profiles.get(NEXTDNS_PROFILE)?.parentalControl.recreation;
    expect(recreation?.timezone).toBe('Europe/Paris');
    expect(recreation?.times.monday).toEqual({
      start: `${schedule.weekday.start}:00`,
      end: schedule.weekday.end === '24:00' ? '23:59:59' : `${schedule.weekday.end}:00`,
    });
    expect(recreation?.times.sunday?.start).toBe(`${schedule.weekend.start}:00`);
  });

  it('reads and writes Control D only through routes its reference documents', async () => {
    // The double, like Control D, has no per-profile options list and no `rules/all` folder.
    for (const path of ['options', 'rules/all']) {
      const undocumented = await fetch(
        `${doubles.controld.url}/profiles/${CONTROLD_PROFILE}/${path}`,
        { headers: { authorization: `Bearer ${CONTROLD_TOKEN}` } },
      );
      expect(undocumented.status, path).toBe(405);
    }
    doubles.controld.undocumented.length = 0;

    // The parent's own: safe search on (its value comes only with the profile listing) and a
    // bypass for the school in a folder (its rules come only from that folder's listing).
    const profile = doubles.controld.profiles.get(CONTROLD_PROFILE) as ControlDProfile;
    profile.options.set('safesearch', 1);
    profile.groups.set(7, { group: 'School', action: { do: 1, status: 1 } });
    profile.rules.set('school.example', { do: 1, status: 1, group: 7 });

    const before = doubles.controld.requests.length;
    const job = await enforce(api, family.childId);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(resultFor(job, 'controld')).toMatchObject({ status: 'success', rules_failed: 0 });
    const expected = expectedControlD();
    expected.rules['school.example'] = { do: 1, status: 1, group: 7 };
    expect(controldState(doubles)).toEqual(expected);
    // Safe search read as on: only the option that was off is switched.
    const writes = doubles.controld.requests
      .slice(before)
      .filter((line) => !line.startsWith('GET '));
    expect(writes).toContain(`PUT /profiles/${CONTROLD_PROFILE}/options/safeyoutube`);
    expect(writes).not.toContain(`PUT /profiles/${CONTROLD_PROFILE}/options/safesearch`);

    // Haven's own rule switched off on Control D's side is switched back on, by hostname.
    (profile.rules.get('games.example') as { status: number }).status = 0;
    const switchedOff = doubles.controld.requests.length;
    expect((await enforce(api, family.childId)).status).toBe('completed');
    expect(profile.rules.get('games.example')).toEqual({ do: 0, status: 1, group: 0 });
    expect(doubles.controld.requests.slice(switchedOff)).toContain(
      `PUT /profiles/${CONTROLD_PROFILE}/rules`,
    );
    expect(doubles.controld.undocumented).toEqual([]);
  });

  it('has the NextDNS double refuse what its documentation lacks, as the Control D one does', async () => {
    const at = (path: string, method: string) =>
      fetch(`${doubles.nextdns.url}/profiles/${NEXTDNS_PROFILE}/${path}`, {
        method,
        headers: { 'x-api-key': NEXTDNS_KEY, 'content-type': 'application/json' },
        body: method === 'GET' ? undefined : '{}',
      });
    // The documentation gives objects GET and PATCH, arrays GET, PUT and POST, and their
    // children PATCH and DELETE: neither request below is among them.
    expect((await at('parentalControl', 'POST')).status).toBe(405);
    expect((await at('denylist/parent-own.example', 'GET')).status).toBe(405);
    expect((await at('denylist', 'GET')).status).toBe(200);
    expect(doubles.nextdns.undocumented).toEqual([
      `POST /profiles/${NEXTDNS_PROFILE}/parentalControl`,
      `GET /profiles/${NEXTDNS_PROFILE}/denylist/parent-own.example`,
    ]);
  });

  it('changes nothing when the same policy is enforced again', async () => {
    await enforce(api, family.childId);
    const nextdnsOnce = structuredClone(doubles.nextdns.profiles.get(NEXTDNS_PROFILE));
    const controldOnce = controldState(doubles);
    const before = [doubles.nextdns.requests.length, doubles.controld.requests.length];
    const again = await enforce(api, family.childId);
    expect(again.status).toBe('completed');
    expect(doubles.nextdns.profiles.get(NEXTDNS_PROFILE)).toEqual(nextdnsOnce);
    expect(controldState(doubles)).toEqual(controldOnce);
    // Converged already: the second run only read.
    const calls = [
      ...doubles.nextdns.requests.slice(before[0]),
      ...doubles.controld.requests.slice(before[1]),
    ];
    expect(
      calls.filter((call) => !call.startsWith('GET ')),
      JSON.stringify(calls),
    ).toEqual([]);
  });

  it('follows a changed rule and a removed one, and restores what it had changed', async () => {
    await enforce(api, family.childId);
    const changed = await api(
      'PUT',
      `/api/v1/policies/${family.policyId}/rules/web_custom_blocklist`,
      { enabled: true, config: { domains: ['games.example', 'new.example'] } },
    );
    expect(changed.status).toBe(200);
    expect((await enforce(api, family.childId)).status).toBe('completed');
    expect(nextdnsState(doubles)).toEqual(
      expectedNextDns({ denylist: ['games.example', 'new.example'] }),
    );
    expect(controldState(doubles)).toEqual(
      expectedControlD({ blocked: ['games.example', 'new.example'] }),
    );

    // Removing web_category_block: social-networks / social and the bypass block go (nothing
    // else wants them); porn stays (web_filter_level wants it too).
    const removed = await api(
      'DELETE',
      `/api/v1/policies/${family.policyId}/rules/web_category_block`,
    );
    expect(removed.status).toBe(204);
    expect((await enforce(api, family.childId)).status).toBe('completed');
    const nextdns = expectedNextDns({
      denylist: ['games.example', 'new.example'],
      categories: ['porn', 'gambling', 'dating', 'piracy'],
    });
    nextdns.parentalControl.blockBypass = false;
    expect(nextdnsState(doubles)).toEqual(nextdns);
    expect(controldState(doubles)).toEqual(
      expectedControlD({
        blocked: ['games.example', 'new.example'],
        filters: ['ads', 'dating', 'drugs', 'gambling', 'iot', 'porn'],
      }),
    );
  });

  it('runs one job at a time on a profile: jobs started together all complete, and converge', async () => {
    const jobs = await Promise.all(
      Array.from({ length: 3 }, () =>
        api('POST', `/api/v1/children/${family.childId}/enforce`, {}),
      ),
    );
    let finished: string[] = [];
    // Polled gently: the parent's requests count against its rate limit on a frozen clock.
    await eventually(
      async () => {
        await new Promise((resolve) => setTimeout(resolve, 250));
        finished = [];
        for (const queued of jobs) {
          expect(queued.status).toBe(202);
          const job = await api('GET', `/api/v1/enforcement/jobs/${queued.body.id}`);
          expect(job.status, JSON.stringify(job.body)).toBe(200);
          finished.push(job.body.status);
        }
        return finished.every((status) => !['pending', 'running'].includes(status));
      },
      'the three jobs to finish',
      30_000,
    );
    expect(finished).toEqual(['completed', 'completed', 'completed']);
    expect(nextdnsState(doubles)).toEqual(expectedNextDns());
    expect(controldState(doubles)).toEqual(expectedControlD());
  });

  it('converges to the policy in force when it gets the profile, not the one it started with', async () => {
    await enforce(api, family.childId);
    const db = t.database.handle.db;
    const holdLeases = (until: Date | null) =>
      db
        .updateTable('partner_managed_state')
        .set({ lease_owner: until ? 'another run' : null, lease_until: until })
        .where('connection_id', 'in', [connections.nextdns, connections.controld])
        .execute();
    // Another run holds both profiles: this job reads its policy, then waits for them.
    await holdLeases(new Date(t.clock.now().getTime() + 3_600_000));
    const queued = await api('POST', `/api/v1/children/${family.childId}/enforce`, {});
    await eventually(async () => {
      await new Promise((resolve) => setTimeout(resolve, 100));
      return (
        (await api('GET', `/api/v1/enforcement/jobs/${queued.body.id}`)).body.status === 'running'
      );
    }, 'the job to start');
    // Meanwhile the blocklist changes (in the database: no automatic job follows).
    await db
      .updateTable('policy_rules')
      .set({ config: JSON.stringify({ domains: ['later.example'] }) as never })
      .where('policy_id', '=', family.policyId)
      .where('category', '=', 'web_custom_blocklist')
      .execute();
    await holdLeases(null);
    let status = 'running';
    await eventually(async () => {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await api('GET', `/api/v1/enforcement/jobs/${queued.body.id}`)).body.status;
      return status !== 'running' && status !== 'pending';
    }, 'the job to finish');
    expect(status).toBe('completed');
    expect(nextdnsState(doubles)).toEqual(expectedNextDns({ denylist: ['later.example'] }));
    expect(controldState(doubles)).toEqual(expectedControlD({ blocked: ['later.example'] }));
  });

  it('leaves an entry the parent made even when a rule wants the same thing', async () => {
    await api('PUT', `/api/v1/policies/${family.policyId}/rules/web_custom_blocklist`, {
      enabled: true,
      config: { domains: ['parent-own.example'] },
    });
    await enforce(api, family.childId);
    await api('PUT', `/api/v1/policies/${family.policyId}/rules/web_custom_blocklist`, {
      enabled: true,
      config: { domains: [] },
    });
    expect((await enforce(api, family.childId)).status).toBe('completed');
    expect(nextdnsState(doubles).denylist).toEqual([{ id: 'parent-own.example', active: true }]);
  });

  it('releases on pause: what Haven added goes, what it changed goes back, the parent keeps theirs', async () => {
    type Listed = Job & { trigger_type: string };
    const jobsOfChild = async () =>
      (await api('GET', `/api/v1/children/${family.childId}/enforcement/jobs`)).body as Listed[];
    const settled = async () => {
      let jobs: Listed[] = [];
      await eventually(
        async () => {
          jobs = await jobsOfChild();
          return jobs.every((job) => !['pending', 'running'].includes(job.status));
        },
        "the child's jobs to finish",
        30_000,
      );
      return jobs;
    };
    // Control D's default rule is a setting Haven changes only for an allowlist-only policy;
    // the rule change is enforced automatically (the family is connected).
    await api('PUT', `/api/v1/policies/${family.policyId}/rules/web_allowlist_only`, {
      enabled: true,
      config: { enabled: true },
    });
    const [enforced] = await settled();
    expect(enforced?.status, JSON.stringify(enforced)).toBe('completed');
    expect(doubles.controld.profiles.get(CONTROLD_PROFILE)?.default).toEqual({ do: 0, status: 1 });
    expect(nextdnsState(doubles).parentalControl.safeSearch).toBe(true);

    // Since then the parent changed two settings Haven had set: those stay as the parent left
    // them (NextDNS's recreation times, Control D's default rule switched off).
    const nextdns = doubles.nextdns.profiles.get(NEXTDNS_PROFILE);
    const controld = doubles.controld.profiles.get(CONTROLD_PROFILE) as ControlDProfile;
    expect(nextdns?.parentalControl.recreation.times.monday).toBeDefined();
    const parentTimes = { monday: { start: '10:00:00', end: '11:00:00' } };
    (nextdns as NonNullable<typeof nextdns>).parentalControl.recreation.times = parentTimes;
    controld.default = { do: 1, status: 0 };

    const paused = await api('POST', `/api/v1/policies/${family.policyId}/pause`);
    expect(paused.status).toBe(200);
    const release = (await settled()).filter((job) => job.trigger_type === 'release');
    expect(release).toHaveLength(1);
    expect(release[0]?.status, JSON.stringify(release)).toBe('completed');
    for (const platform of ['nextdns', 'controld']) {
      expect(resultFor(release[0] as Job, platform)).toMatchObject({
        status: 'success',
        rules_applied: 0,
        rules_skipped: 0,
        rules_failed: 0,
        error_message: null,
      });
    }

    // NextDNS: Haven's entries gone, its settings back to what it found (off); the parent's
    // denylist entry and paused service as they were.
    expect(nextdnsState(doubles)).toEqual({
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
    });
    expect(nextdns?.parentalControl.recreation).toEqual({
      times: parentTimes,
      timezone: 'Europe/Paris',
    });
    // Control D: Haven's custom rules deleted and services switched off (the API deletes no
    // service), its filters and options back off; the parent's rule, filter and default stay.
    expect(controldState(doubles)).toEqual({
      filters: ['iot'],
      services: { tiktok: { do: 0, status: 0 }, roblox: { do: 0, status: 0 } },
      rules: { 'parent-own.example': { do: 1, status: 1, group: 0 } },
      default: { do: 1, status: 0 },
      options: [],
    });
    expect(doubles.nextdns.undocumented).toEqual([]);
    expect(doubles.controld.undocumented).toEqual([]);

    // Deleting the paused policy takes nothing more away: no further job.
    const deleted = await api('DELETE', `/api/v1/policies/${family.policyId}`);
    expect(deleted.status).toBe(204);
    expect(await jobsOfChild()).toHaveLength(2);
  });

  it('reports refused credentials, marks the connection, and recovers once they are renewed', async () => {
    doubles.nextdns.profiles.delete(NEXTDNS_PROFILE);
    doubles.nextdns.addProfile(NEXTDNS_PROFILE);
    const revoked = doubles.nextdns as { apiKey: string };
    Object.defineProperty(revoked, 'apiKey', { value: 'another-key', configurable: true });
    try {
      const job = await enforce(api, family.childId);
      expect(job.status).toBe('partial');
      const result = resultFor(job, 'nextdns');
      expect(result).toMatchObject({ status: 'failed', rules_applied: 0 });
      expect(result.rules_failed).toBeGreaterThan(0);
      expect(result.error_message).toContain('NextDNS refused the credentials (HTTP 403)');
      expect(result.error_message).toContain(`PATCH /api/v1/connections/${connections.nextdns}`);
      const listed = (await api('GET', `/api/v1/families/${family.familyId}/connections`)).body;
      const nextdns = listed.find((c: { platform_id: string }) => c.platform_id === 'nextdns');
      expect(nextdns.status).toBe('credentials_rejected');

      // Renewing with a key the partner refuses too is a 400, and changes nothing.
      const refused = await api('PATCH', `/api/v1/connections/${connections.nextdns}`, {
        credentials: { api_key: NEXTDNS_KEY, profile_id: NEXTDNS_PROFILE },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.message).toContain('NextDNS refused the credentials');
    } finally {
      Object.defineProperty(revoked, 'apiKey', { value: NEXTDNS_KEY, configurable: true });
    }
    const renewed = await api('PATCH', `/api/v1/connections/${connections.nextdns}`, {
      credentials: { api_key: NEXTDNS_KEY, profile_id: NEXTDNS_PROFILE },
    });
    expect(renewed.status, JSON.stringify(renewed.body)).toBe(200);
    expect(renewed.body).toMatchObject({ status: 'connected', has_credentials: true });
    expect(JSON.stringify(renewed.body)).not.toContain(NEXTDNS_KEY);
    expect((await enforce(api, family.childId)).status).toBe('completed');
  });

  it('names a missing profile', async () => {
    doubles.controld.profiles.delete(CONTROLD_PROFILE);
    const job = await enforce(api, family.childId);
    expect(job.status).toBe('partial');
    const result = resultFor(job, 'controld');
    expect(result.status).toBe('failed');
    expect(result.error_message).toContain(`Control D has no profile "${CONTROLD_PROFILE}"`);
  });

  it('retries a 429 after its Retry-After, and a 5xx with backoff, then succeeds', async () => {
    doubles.nextdns.faults.push({
      status: 429,
      retryAfter: '1',
      body: { errors: [{ code: 'tooManyRequests' }] },
    });
    doubles.controld.faults.push({
      status: 503,
      body: { body: [], success: false, error: { message: 'Service unavailable', code: 50301 } },
    });
    const started = Date.now();
    const job = await enforce(api, family.childId);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(nextdnsState(doubles)).toEqual(expectedNextDns());
    expect(controldState(doubles)).toEqual(expectedControlD());
  });

  it('gives up on a call that outlasts its timeout, and succeeds on the retry', async () => {
    doubles.nextdns.faults.push({ hangMs: TIMEOUT_MS * 3, match: /^POST / });
    const job = await enforce(api, family.childId);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(nextdnsState(doubles)).toEqual(expectedNextDns());
  });

  it('fails what an outage cut off mid-run, and the next run converges from there', async () => {
    // Every attempt at one write fails: the run ends there with that partner's message.
    for (let i = 0; i < 3; i++) {
      doubles.nextdns.faults.push({
        status: 500,
        match: /^POST .*\/denylist$/,
        body: { errors: [{ code: 'internalServerError' }] },
      });
    }
    const cut = await enforce(api, family.childId);
    expect(cut.status).toBe('partial');
    const result = resultFor(cut, 'nextdns');
    expect(result.status).toBe('failed');
    expect(result.rules_failed).toBeGreaterThan(0);
    expect(result.error_message).toContain('NextDNS answered 500');
    expect(result.error_message).toContain('after 3 attempts');

    const next = await enforce(api, family.childId);
    expect(next.status).toBe('completed');
    expect(nextdnsState(doubles)).toEqual(expectedNextDns());
  });

  it('checks credentials at connect: fields named, refusals and missing profiles are 400s', async () => {
    const post = (credentials: Record<string, string>, platform = 'nextdns') =>
      api('POST', `/api/v1/families/${family.familyId}/connections`, {
        platform_id: platform,
        credentials,
      });
    await api('DELETE', `/api/v1/connections/${connections.nextdns}`);
    await api('DELETE', `/api/v1/connections/${connections.controld}`);

    const missing = await post({ api_key: NEXTDNS_KEY });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toBe(
      'credentials.profile_id is required for nextdns (it needs api_key, profile_id)',
    );
    const noToken = await post({ profile_id: CONTROLD_PROFILE }, 'controld');
    expect(noToken.body.message).toContain('credentials.api_token is required for controld');

    const wrongKey = await post({ api_key: 'not-the-key', profile_id: NEXTDNS_PROFILE });
    expect(wrongKey.status).toBe(400);
    expect(wrongKey.body.message).toContain('NextDNS refused the credentials (HTTP 403)');
    expect(JSON.stringify(wrongKey.body)).not.toContain('not-the-key');

    const wrongToken = await post(
      { api_token: 'api.wrong', profile_id: CONTROLD_PROFILE },
      'controld',
    );
    expect(wrongToken.status).toBe(400);
    expect(wrongToken.body.message).toContain('Control D refused the credentials (HTTP 401)');

    const noProfile = await post({ api_token: CONTROLD_TOKEN, profile_id: 'nope' }, 'controld');
    expect(noProfile.status).toBe(400);
    expect(noProfile.body.message).toContain('Control D has no profile "nope"');

    for (let i = 0; i < 3; i++) {
      doubles.nextdns.faults.push({ status: 502 });
    }
    const down = await post({ api_key: NEXTDNS_KEY, profile_id: NEXTDNS_PROFILE });
    expect(down.status).toBe(503);
    expect(down.body.message).toContain('NextDNS could not be reached to check the credentials');

    // Nothing above was stored.
    expect((await api('GET', `/api/v1/families/${family.familyId}/connections`)).body).toEqual([]);
  });
});
