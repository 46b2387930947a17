// A NextDNS double, written from its public API documentation (https://nextdns.github.io/api/)
// and the behaviour its clients record (docs/decisions.md "NextDNS and Control D"): profiles
// as whole documents under X-Api-Key; {data} answers and {errors:[{code, detail, source}]}
// refusals; 204 on writes; 403 for a refused key; 404 notFound for a missing profile or
// entry; `duplicate` answered 200 with errors; PATCH deep-merges objects and replaces arrays.
import {
  NEXTDNS_CATEGORIES,
  NEXTDNS_SERVICES,
} from '../../src/modules/partners/nextdns/mapping.js';
import { type DoubleAnswer, type DoubleRequest, DoubleServer } from './double-server.js';

export interface Entry {
  id: string;
  active?: boolean;
  recreation?: boolean;
}

export interface NextDnsProfile {
  id: string;
  name: string;
  security: Record<string, unknown> & { tlds: Entry[] };
  privacy: Record<string, unknown> & { blocklists: Entry[]; natives: Entry[] };
  parentalControl: {
    safeSearch: boolean;
    youtubeRestrictedMode: boolean;
    blockBypass: boolean;
    services: Entry[];
    categories: Entry[];
    recreation: { times: Record<string, { start: string; end: string }>; timezone: string | null };
  };
  denylist: Entry[];
  allowlist: Entry[];
}

const BLOCKLISTS = ['nextdns-recommended', 'oisd', 'energized', 'adguard-dns-filter'];
const DOMAIN = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const TIME = /^(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d$/;
const DAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];

export function blankProfile(id: string): NextDnsProfile {
  return {
    id,
    name: `profile ${id}`,
    security: {
      threatIntelligenceFeeds: false,
      aiThreatDetection: false,
      googleSafeBrowsing: false,
      cryptojacking: false,
      dnsRebinding: false,
      idnHomographs: false,
      typosquatting: false,
      dga: false,
      nrd: false,
      ddns: false,
      parking: false,
      csam: false,
      tlds: [],
    },
    privacy: { blocklists: [], natives: [], disguisedTrackers: false, allowAffiliate: true },
    parentalControl: {
      safeSearch: false,
      youtubeRestrictedMode: false,
      blockBypass: false,
      services: [],
      categories: [],
      recreation: { times: {}, timezone: null },
    },
    denylist: [],
    allowlist: [],
  };
}

const error = (status: number, code: string, pointer?: string, detail?: string): DoubleAnswer => ({
  status,
  body: {
    errors: [{ code, ...(detail ? { detail } : {}), ...(pointer ? { source: { pointer } } : {}) }],
  },
});

/** Which ids each list accepts. */
const LISTS: Record<string, (id: string) => boolean> = {
  'parentalControl/services': (id) => (NEXTDNS_SERVICES as readonly string[]).includes(id),
  'parentalControl/categories': (id) => (NEXTDNS_CATEGORIES as readonly string[]).includes(id),
  'privacy/blocklists': (id) => BLOCKLISTS.includes(id),
  'privacy/natives': (id) => ['apple', 'windows', 'samsung', 'alexa', 'roku', 'sonos'].includes(id),
  denylist: (id) => DOMAIN.test(id),
  allowlist: (id) => DOMAIN.test(id),
};

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** NextDNS's PATCH: known keys only, same types, objects merged, arrays replaced. */
function merge(
  target: Record<string, unknown>,
  patch: unknown,
  pointer: string,
): DoubleAnswer | undefined {
  if (!isObject(patch)) {
    return error(400, 'type', pointer || '/');
  }
  for (const [key, value] of Object.entries(patch)) {
    const at = `${pointer}/${key}`;
    if (!(key in target)) {
      return error(400, 'extraneous', at);
    }
    const current = target[key];
    if (isObject(current) && key !== 'times') {
      const refused = merge(current, value, at);
      if (refused) {
        return refused;
      }
      continue;
    }
    if (key === 'times') {
      if (!isObject(value)) {
        return error(400, 'type', at);
      }
      for (const [day, window] of Object.entries(value)) {
        if (
          !DAYS.includes(day) ||
          !isObject(window) ||
          !TIME.test(String(window.start)) ||
          !TIME.test(String(window.end))
        ) {
          return error(400, 'invalid', `${at}/${day}`);
        }
      }
    } else if (key === 'timezone') {
      if (value !== null && typeof value !== 'string') {
        return error(400, 'type', at);
      }
    } else if (typeof current !== typeof value || Array.isArray(current) !== Array.isArray(value)) {
      return error(400, 'type', at);
    }
    target[key] = value;
  }
  return undefined;
}

export class NextDnsDouble extends DoubleServer {
  readonly profiles = new Map<string, NextDnsProfile>();

  constructor(readonly apiKey: string) {
    super();
  }

  addProfile(id: string): NextDnsProfile {
    const profile = blankProfile(id);
    this.profiles.set(id, profile);
    return profile;
  }

  protected malformed() {
    return { errors: [{ code: 'invalid', detail: 'malformed JSON' }] };
  }

  protected handle(request: DoubleRequest): DoubleAnswer {
    if (request.headers['x-api-key'] !== this.apiKey) {
      return error(403, 'forbidden');
    }
    const match = /^\/profiles\/([^/]+)(?:\/(.*))?$/.exec(request.path);
    if (!match) {
      return error(404, 'notFound');
    }
    const profile = this.profiles.get(decodeURIComponent(match[1] as string));
    if (!profile) {
      return error(404, 'notFound');
    }
    const rest = match[2] ?? '';
    if (rest === '' && request.method === 'GET') {
      return { status: 200, body: { data: profile } };
    }
    if (['security', 'privacy', 'parentalControl'].includes(rest)) {
      const object = profile[rest as 'security'] as Record<string, unknown>;
      if (request.method === 'GET') {
        return { status: 200, body: { data: object } };
      }
      if (request.method === 'PATCH') {
        // All or nothing: a refused patch changes nothing.
        const copy = structuredClone(object);
        const refused = merge(copy, request.body, '');
        if (refused) {
          return refused;
        }
        Object.assign(object, copy);
        return { status: 204 };
      }
    }
    const list = Object.keys(LISTS).find((name) => rest === name || rest.startsWith(`${name}/`));
    if (!list) {
      return error(404, 'notFound');
    }
    const entries = list
      .split('/')
      .reduce<unknown>(
        (value, part) => (value as Record<string, unknown>)[part],
        profile,
      ) as Entry[];
    const itemId = rest === list ? undefined : decodeURIComponent(rest.slice(list.length + 1));
    if (itemId === undefined) {
      if (request.method === 'GET') {
        return { status: 200, body: { data: entries } };
      }
      if (request.method !== 'POST') {
        return error(405, 'methodNotAllowed');
      }
      const body = request.body as Entry | undefined;
      if (!isObject(body) || typeof body.id !== 'string' || !LISTS[list]?.(body.id)) {
        return error(400, 'invalid', '/id');
      }
      if (entries.some((entry) => entry.id === body.id)) {
        return { status: 200, body: { errors: [{ code: 'duplicate' }] } };
      }
      const entry: Entry = { id: body.id };
      if (list !== 'privacy/blocklists' && list !== 'privacy/natives') {
        entry.active = body.active ?? true;
      }
      if (list.startsWith('parentalControl/')) {
        entry.recreation = body.recreation ?? false;
      }
      entries.push(entry);
      return { status: 204 };
    }
    const index = entries.findIndex((entry) => entry.id === itemId);
    if (index === -1) {
      return error(404, 'notFound');
    }
    if (request.method === 'DELETE') {
      entries.splice(index, 1);
      return { status: 204 };
    }
    if (request.method === 'PATCH') {
      const refused = merge(entries[index] as unknown as Record<string, unknown>, request.body, '');
      return refused ?? { status: 204 };
    }
    return error(405, 'methodNotAllowed');
  }
}
