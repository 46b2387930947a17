// A NextDNS double, written from its public API documentation (https://nextdns.github.io/api/)
// and the behaviour its clients record (docs/decisions.md "NextDNS and Control D"): profiles
// as whole documents under X-Api-Key; {data} answers and {errors:[{code, detail, source}]}
// refusals; 204 on writes; 403 for a refused key; 404 notFound for a missing profile or
// entry; `duplicate` answered 200 with errors; PATCH deep-merges objects and replaces arrays.
// It serves only routes that documentation gives (a profile: GET; its nested objects: GET and
// PATCH; its arrays: GET and POST, their children PATCH and DELETE); any other route answers 405.
import {
  NEXTDNS_CATEGORIES,
  NEXTDNS_SERVICES,
} from '../../src/modules/partners/nextdns/mapping.js';
import {
  type DocumentedRoute,
  type DoubleAnswer,
  type DoubleRequest,
  DoubleServer,
} from './double-server.js';

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
const REFERENCE = 'https://nextdns.github.io/api/';
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

/** The nested objects Haven reads and patches. */
const OBJECTS = ['security', 'privacy', 'parentalControl'] as const;

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

  protected refuse(request: DoubleRequest): DoubleAnswer | undefined {
    return request.headers['x-api-key'] === this.apiKey ? undefined : error(403, 'forbidden');
  }

  protected notDocumented(request: DoubleRequest): DoubleAnswer {
    return error(
      405,
      'methodNotAllowed',
      undefined,
      `${request.method} ${request.path} is not a route of the NextDNS API documentation`,
    );
  }

  /** A route under /profiles/:profile: a profile that is not there is a 404 notFound. */
  private inProfile(
    serve: (profile: NextDnsProfile, request: DoubleRequest, params: string[]) => DoubleAnswer,
  ): DocumentedRoute['serve'] {
    return (request, [id, ...params]) => {
      const profile = this.profiles.get(id as string);
      return profile ? serve(profile, request, params) : error(404, 'notFound');
    };
  }

  protected readonly routes: readonly DocumentedRoute[] = [
    {
      method: 'GET',
      path: /^\/profiles\/([^/]+)$/,
      reference: `${REFERENCE} Profiles`,
      serve: this.inProfile((profile) => ({ status: 200, body: { data: profile } })),
    },
    ...OBJECTS.flatMap((name): DocumentedRoute[] => {
      const path = new RegExp(`^/profiles/([^/]+)/${name}$`);
      const reference = `${REFERENCE} Nested objects and arrays (objects: GET, PATCH)`;
      return [
        {
          method: 'GET',
          path,
          reference,
          serve: this.inProfile((profile) => ({ status: 200, body: { data: profile[name] } })),
        },
        {
          method: 'PATCH',
          path,
          reference,
          serve: this.inProfile((profile, request) => {
            // All or nothing: a refused patch changes nothing.
            const object = profile[name] as Record<string, unknown>;
            const copy = structuredClone(object);
            const refused = merge(copy, request.body, '');
            if (refused) {
              return refused;
            }
            Object.assign(object, copy);
            return { status: 204 };
          }),
        },
      ];
    }),
    ...Object.keys(LISTS).flatMap((list): DocumentedRoute[] => {
      const path = new RegExp(`^/profiles/([^/]+)/${list}$`);
      const child = new RegExp(`^/profiles/([^/]+)/${list}/([^/]+)$`);
      const reference = `${REFERENCE} Nested objects and arrays (arrays: GET, POST; children: PATCH, DELETE)`;
      const entriesOf = (profile: NextDnsProfile) =>
        list
          .split('/')
          .reduce<unknown>(
            (value, part) => (value as Record<string, unknown>)[part],
            profile,
          ) as Entry[];
      return [
        {
          method: 'GET',
          path,
          reference,
          serve: this.inProfile((profile) => ({
            status: 200,
            body: { data: entriesOf(profile) },
          })),
        },
        {
          method: 'POST',
          path,
          reference,
          serve: this.inProfile((profile, request) => {
            const entries = entriesOf(profile);
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
          }),
        },
        {
          method: 'PATCH',
          path: child,
          reference,
          serve: this.inProfile((profile, request, [id]) => {
            const entry = entriesOf(profile).find((candidate) => candidate.id === id);
            if (!entry) {
              return error(404, 'notFound');
            }
            const refused = merge(entry as unknown as Record<string, unknown>, request.body, '');
            return refused ?? { status: 204 };
          }),
        },
        {
          method: 'DELETE',
          path: child,
          reference,
          serve: this.inProfile((profile, _request, [id]) => {
            const entries = entriesOf(profile);
            const index = entries.findIndex((entry) => entry.id === id);
            if (index === -1) {
              return error(404, 'notFound');
            }
            entries.splice(index, 1);
            return { status: 204 };
          }),
        },
      ];
    }),
  ];
}
