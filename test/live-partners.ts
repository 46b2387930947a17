// What the live-adapter tests share (in-process and real processes): the two partner doubles
// with a profile each, a family set up through the API with both partners connected, and
// the profile state a policy must leave on each double, spelled out by hand.
import { expect } from 'vitest';
import { ControlDDouble } from './partner-doubles/controld-double.js';
import { NextDnsDouble } from './partner-doubles/nextdns-double.js';
import { eventually } from './tcp-proxy.js';

export const NEXTDNS_KEY = 'nd-key-0123456789abcdef';
export const NEXTDNS_PROFILE = 'a1b2c3';
export const CONTROLD_TOKEN = 'api.cd-token-0123456789';
export const CONTROLD_PROFILE = '739271abcd';
/** A 32-byte AES key, so production can seal partner credentials. */
export const CREDENTIALS_KEY = Buffer.alloc(32, 7).toString('base64');

export async function startDoubles() {
  const nextdns = new NextDnsDouble(NEXTDNS_KEY);
  const controld = new ControlDDouble(CONTROLD_TOKEN);
  await Promise.all([nextdns.start(), controld.start()]);
  return {
    nextdns,
    controld,
    env: { NEXTDNS_API_URL: nextdns.url, CONTROLD_API_URL: controld.url, CREDENTIALS_KEY },
    /** Fresh profiles, each holding an entry the parent made themselves. */
    reset() {
      for (const double of [nextdns, controld]) {
        double.faults.length = 0;
        double.undocumented.length = 0;
      }
      const nd = nextdns.addProfile(NEXTDNS_PROFILE);
      nd.denylist.push({ id: 'parent-own.example', active: true });
      nd.parentalControl.services.push({ id: 'fortnite', active: false, recreation: true });
      nd.parentalControl.recreation.timezone = 'Europe/Paris';
      const cd = controld.addProfile(CONTROLD_PROFILE);
      cd.rules.set('parent-own.example', { do: 1, status: 1, group: 0 });
      cd.filters.set('iot', 1);
    },
    async stop() {
      await Promise.all([nextdns.stop(), controld.stop()]);
    },
  };
}

export type Doubles = Awaited<ReturnType<typeof startDoubles>>;

export type Api = (
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ status: number; body: ReturnType<typeof JSON.parse> }>;

export interface Job {
  id: string;
  status: string;
  results: Array<{
    platform_id: string;
    connection_id: string;
    status: string;
    rules_applied: number;
    rules_skipped: number;
    rules_failed: number;
    error_message: string | null;
  }>;
}

/** A child with the 20 age rules, and the rules these tests drive on top of them. */
export async function setUpFamily(api: Api) {
  const setup = await api('POST', '/api/v1/setup/quick', {
    child_name: 'Robin',
    birth_date: '2014-03-02',
  });
  expect(setup.status, JSON.stringify(setup.body)).toBe(201);
  const family = {
    familyId: setup.body.family.id as string,
    childId: setup.body.child.id as string,
    policyId: setup.body.policy.id as string,
  };
  const rules = await api('PUT', `/api/v1/policies/${family.policyId}/rules`, {
    rules: [
      { category: 'web_filter_level', enabled: true, config: { level: 'moderate' } },
      {
        category: 'web_category_block',
        enabled: true,
        config: { categories: ['adult', 'social_media', 'proxies_vpn', 'hate'] },
      },
      {
        category: 'web_custom_blocklist',
        enabled: true,
        config: { domains: ['games.example', '*.casino.example'] },
      },
      { category: 'web_custom_allowlist', enabled: true, config: { domains: ['school.example'] } },
      {
        category: 'app_block_list',
        enabled: true,
        config: { apps: ['TikTok', 'Roblox', 'com.example.unknown'] },
      },
      { category: 'content_restricted_mode', enabled: true, config: { enabled: true } },
    ],
  });
  expect(rules.status, JSON.stringify(rules.body)).toBe(200);
  return family;
}

export async function connectPartners(api: Api, familyId: string) {
  const nextdns = await api('POST', `/api/v1/families/${familyId}/connections`, {
    platform_id: 'nextdns',
    credentials: { api_key: NEXTDNS_KEY, profile_id: NEXTDNS_PROFILE },
  });
  expect(nextdns.status, JSON.stringify(nextdns.body)).toBe(201);
  const controld = await api('POST', `/api/v1/families/${familyId}/connections`, {
    platform_id: 'controld',
    credentials: { api_token: CONTROLD_TOKEN, profile_id: CONTROLD_PROFILE },
  });
  expect(controld.status, JSON.stringify(controld.body)).toBe(201);
  return { nextdns: nextdns.body.id as string, controld: controld.body.id as string };
}

/** Queues a job for the child and waits (bounded) until it has finished. */
export async function enforce(api: Api, childId: string): Promise<Job> {
  const queued = await api('POST', `/api/v1/children/${childId}/enforce`, {});
  expect(queued.status, JSON.stringify(queued.body)).toBe(202);
  let job: Job | undefined;
  await eventually(
    async () => {
      job = (await api('GET', `/api/v1/enforcement/jobs/${queued.body.id}`)).body;
      return job !== undefined && !['pending', 'running'].includes(job.status);
    },
    'the enforcement job to finish',
    30_000,
  );
  return job as Job;
}

export function resultFor(job: Job, platformId: string) {
  const result = job.results.find((r) => r.platform_id === platformId);
  expect(result, JSON.stringify(job)).toBeDefined();
  return result as Job['results'][number];
}

/**
 * The NextDNS profile the setUpFamily policy leaves (quick-setup rules for an 11-year-old:
 * web_safesearch, targeted_ad_block, time_scheduled_hours 07:00-20:00 / 08:00-21:00, plus
 * the rules above), with the parent's own entries as they were.
 */
export function expectedNextDns(changes: { denylist?: string[]; categories?: string[] } = {}) {
  const categories = changes.categories ?? [
    'porn',
    'gambling',
    'dating',
    'piracy',
    'social-networks',
  ];
  const denylist = changes.denylist ?? ['games.example', 'casino.example'];
  return {
    parentalControl: {
      safeSearch: true,
      youtubeRestrictedMode: true,
      blockBypass: true,
      services: byId([
        { id: 'fortnite', active: false, recreation: true },
        { id: 'tiktok', active: true, recreation: false },
        { id: 'roblox', active: true, recreation: false },
      ]),
      categories: byId(categories.map((id) => ({ id, active: true, recreation: false }))),
    },
    denylist: byId([
      { id: 'parent-own.example', active: true },
      ...denylist.map((id) => ({ id, active: true })),
    ]),
    allowlist: [{ id: 'school.example', active: true }],
    blocklists: [{ id: 'nextdns-recommended' }],
  };
}

const byId = <T extends { id: string }>(entries: T[]) =>
  [...entries].sort((a, b) => a.id.localeCompare(b.id));

/** The parts of a NextDNS double's profile the tests compare, entries in a stable order. */
export function nextdnsState(doubles: Doubles) {
  const profile = doubles.nextdns.profiles.get(NEXTDNS_PROFILE);
  if (!profile) {
    throw new Error('no NextDNS profile');
  }
  const { safeSearch, youtubeRestrictedMode, blockBypass, services, categories } =
    profile.parentalControl;
  return {
    parentalControl: {
      safeSearch,
      youtubeRestrictedMode,
      blockBypass,
      services: byId(services),
      categories: byId(categories),
    },
    denylist: byId(profile.denylist),
    allowlist: byId(profile.allowlist),
    blocklists: byId(profile.privacy.blocklists),
  };
}

export function controldState(doubles: Doubles) {
  const profile = doubles.controld.profiles.get(CONTROLD_PROFILE);
  if (!profile) {
    throw new Error('no Control D profile');
  }
  return {
    filters: [...profile.filters]
      .filter(([, on]) => on === 1)
      .map(([id]) => id)
      .sort(),
    services: Object.fromEntries(profile.services),
    rules: Object.fromEntries(profile.rules),
    default: profile.default,
    options: [...profile.options.keys()].sort(),
  };
}

export function expectedControlD(changes: { blocked?: string[]; filters?: string[] } = {}) {
  const blocked = changes.blocked ?? ['games.example', '*.casino.example'];
  return {
    filters: (
      changes.filters ?? ['ads', 'dating', 'dnsvpn', 'drugs', 'gambling', 'iot', 'porn', 'social']
    ).sort(),
    services: {
      tiktok: { do: 0, status: 1 },
      roblox: { do: 0, status: 1 },
    },
    rules: {
      'parent-own.example': { do: 1, status: 1, group: 0 },
      ...Object.fromEntries(blocked.map((host) => [host, { do: 0, status: 1, group: 0 }])),
      'school.example': { do: 1, status: 1, group: 0 },
    },
    default: null,
    options: ['safesearch', 'safeyoutube'],
  };
}
