// A Control D double, written from its public API reference (https://docs.controld.com/
// reference, whose pages all embed the same OpenAPI description) and the behaviour its clients
// record (docs/decisions.md "NextDNS and Control D"): Bearer tokens; {body, success} answers and
// {body: [], success: false, error: {message, code}} refusals whose code starts with the HTTP
// status (40401: no such profile); native filters and options switched with {status}; services
// and custom rules with {do, status}. It serves only the routes that reference documents
// (ROUTES below, each with its reference page); any other route answers 405.
import { CONTROLD_SERVICES } from '../../src/modules/partners/controld/mapping.js';
import {
  type DocumentedRoute,
  type DoubleAnswer,
  type DoubleRequest,
  DoubleServer,
} from './double-server.js';

export interface Action {
  do: number;
  status: number;
}

export interface RuleFolder {
  group: string;
  /** A folder with a `do` gives it to the rules inside that have none of their own. */
  action: { do?: number; status: number };
}

export interface ControlDProfile {
  PK: string;
  name: string;
  filters: Map<string, number>;
  services: Map<string, Action>;
  /** By hostname; `group` 0 is the root folder, any other a key of `groups`. */
  rules: Map<string, Action & { group: number }>;
  groups: Map<number, RuleFolder>;
  default: Action | null;
  /** The options set on the profile (an unset option holds its catalogue default). */
  options: Map<string, number | string>;
}

export const NATIVE_FILTERS = [
  'ads',
  'porn',
  'fakenews',
  'cryptominers',
  'dating',
  'drugs',
  'ddns',
  'filehost',
  'gambling',
  'gov',
  'iot',
  'malware',
  'nrd',
  'typo',
  'social',
  'torrents',
  'urlshort',
  'dnsvpn',
];

/**
 * The options catalogue (GET /profiles/options). The reference's example lists the toggles
 * and fields below from block_rfc1918 on; safesearch and safeyoutube are the two Haven drives.
 */
const OPTIONS = [
  ['safesearch', 'Safe Search', 'Forces safe search on search engines.', 'toggle', 0],
  ['safeyoutube', 'Restricted YouTube', 'Forces YouTube restricted mode.', 'toggle', 0],
  [
    'block_rfc1918',
    'DNS Rebind Protection',
    'Blocks domains that point to RFC1918 addresses.',
    'toggle',
    0,
  ],
  [
    'spoof_ipv6',
    'IPv4/IPv6 Compatibility Mode',
    'Redirect A records via IPv6 resolver and vice versa.',
    'toggle',
    0,
  ],
  [
    'no_dnssec',
    'Disable DNSSEC',
    'Turn off DNSSEC validation and ECS support for compatibility.',
    'toggle',
    0,
  ],
  [
    'ml_filter',
    'AI Malware Filter',
    'Blocks malicious domains using machine learning.',
    'toggle',
    0,
  ],
  ['ttl_blck', 'Block TTL', 'DNS record TTL (in seconds) when blocking.', 'field', 10],
  ['ttl_spff', 'Redirect TTL', 'DNS record TTL (in seconds) when redirecting.', 'field', 20],
].map(([PK, title, description, type, default_value]) => ({
  PK: PK as string,
  title,
  description,
  type,
  default_value,
  info_url: 'https://kb.controld.com/en/profile-options',
}));
const SERVICES = [...CONTROLD_SERVICES, 'amazonmusic', 'applemusic', 'soundcloud'];
const HOSTNAME = /^(?:\*\.)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const REFERENCE = 'https://docs.controld.com/reference';

const ok = (body: unknown, message?: string): DoubleAnswer => ({
  status: 200,
  body: { body, success: true, ...(message ? { message } : {}) },
});
const refuse = (status: number, code: number, message: string): DoubleAnswer => ({
  status,
  body: { body: [], success: false, error: { message, code } },
});

const isAction = (value: unknown): value is Action =>
  typeof value === 'object' &&
  value !== null &&
  [0, 1, 2, 3].includes((value as Action).do) &&
  [0, 1].includes((value as Action).status);

type Body = Record<string, unknown>;
const bodyOf = (request: DoubleRequest) => (request.body ?? {}) as Body;

/** The hostnames of a rule write, or a refusal naming the first bad one. */
/** A rule write's body, `{do, status, hostnames}`: its action and hosts, or the refusal. */
function ruleWrite(body: Body): { action: Action; hostnames: string[] } | DoubleAnswer {
  const hostnames = body.hostnames;
  if (!isAction(body) || !Array.isArray(hostnames) || hostnames.length === 0) {
    return refuse(400, 40004, 'do, status and hostnames are required');
  }
  for (const host of hostnames) {
    if (typeof host !== 'string' || !HOSTNAME.test(host)) {
      return refuse(400, 40005, `Invalid hostname: ${String(host)}`);
    }
  }
  return { action: { do: body.do, status: body.status }, hostnames: hostnames as string[] };
}

export class ControlDDouble extends DoubleServer {
  readonly profiles = new Map<string, ControlDProfile>();

  constructor(readonly token: string) {
    super();
  }

  addProfile(id: string): ControlDProfile {
    const profile: ControlDProfile = {
      PK: id,
      name: `profile ${id}`,
      filters: new Map(NATIVE_FILTERS.map((filter) => [filter, 0])),
      services: new Map(),
      rules: new Map(),
      groups: new Map(),
      default: null,
      options: new Map(),
    };
    this.profiles.set(id, profile);
    return profile;
  }

  protected malformed() {
    return { body: [], success: false, error: { message: 'Malformed request body', code: 40001 } };
  }

  protected refuse(request: DoubleRequest): DoubleAnswer | undefined {
    return request.headers.authorization === `Bearer ${this.token}`
      ? undefined
      : refuse(401, 40101, 'Invalid or expired API token');
  }

  protected notDocumented(request: DoubleRequest): DoubleAnswer {
    return refuse(
      405,
      40501,
      `${request.method} ${request.path} is not a route of the Control D API reference`,
    );
  }

  /** A route under /profiles/{profile_id}: a profile that is not there is a 40401. */
  private inProfile(
    serve: (profile: ControlDProfile, request: DoubleRequest, params: string[]) => DoubleAnswer,
  ): DocumentedRoute['serve'] {
    return (request, [id, ...params]) => {
      const profile = this.profiles.get(id as string);
      return profile
        ? serve(profile, request, params)
        : refuse(404, 40401, 'This profile does not exist');
    };
  }

  private listed(profile: ControlDProfile) {
    const count = (n: number) => ({ count: n });
    return {
      PK: profile.PK,
      updated: 1_700_000_000,
      name: profile.name,
      stats: 0,
      profile: {
        flt: count([...profile.filters.values()].filter((status) => status === 1).length),
        cflt: count(0),
        ipflt: count(0),
        rule: count(profile.rules.size),
        svc: count([...profile.services.values()].filter((action) => action.status === 1).length),
        grp: count(profile.groups.size),
        opt: {
          count: profile.options.size,
          data: [...profile.options].map(([PK, value]) => ({ PK, value })),
        },
        // The reference shows `[]` for a default rule never set, an object once set.
        da: profile.default ?? [],
      },
    };
  }

  private rulesIn(profile: ControlDProfile, folder: number) {
    return [...profile.rules]
      .map(([PK, { group, ...action }], order) => ({ PK, order, group, action }))
      .filter((rule) => rule.group === folder);
  }

  protected readonly routes: readonly DocumentedRoute[] = [
    {
      method: 'GET',
      path: /^\/profiles$/,
      reference: `${REFERENCE} Profiles - List`,
      serve: () => ok({ profiles: [...this.profiles.values()].map((p) => this.listed(p)) }),
    },
    {
      method: 'GET',
      path: /^\/profiles\/options$/,
      reference: `${REFERENCE} Profiles - List Options`,
      serve: () => ok({ options: OPTIONS }),
    },
    {
      method: 'PUT',
      path: /^\/profiles\/([^/]+)\/options\/([^/]+)$/,
      reference: `${REFERENCE} Profiles - Modify Options`,
      serve: this.inProfile((profile, request, [option]) => {
        const body = bodyOf(request);
        if (!OPTIONS.some((known) => known.PK === option)) {
          return refuse(404, 40405, 'Option does not exist');
        }
        if (body.status === 1) {
          profile.options.set(option as string, (body.value as number | string | undefined) ?? 1);
        } else if (body.status === 0) {
          profile.options.delete(option as string);
        } else {
          return refuse(400, 40002, 'status must be 0 or 1');
        }
        return ok({ options: [...profile.options].map(([PK, value]) => ({ PK, value })) });
      }),
    },
    {
      method: 'GET',
      path: /^\/profiles\/([^/]+)\/filters$/,
      reference: `${REFERENCE} Filters - List Native`,
      serve: this.inProfile((profile) =>
        ok({ filters: [...profile.filters].map(([PK, status]) => ({ PK, name: PK, status })) }),
      ),
    },
    {
      method: 'PUT',
      path: /^\/profiles\/([^/]+)\/filters\/filter\/([^/]+)$/,
      reference: `${REFERENCE} Filters - Modify`,
      serve: this.inProfile((profile, request, [filter]) => {
        const body = bodyOf(request);
        if (!profile.filters.has(filter as string)) {
          return refuse(404, 40402, 'Filter does not exist');
        }
        if (body.status !== 0 && body.status !== 1) {
          return refuse(400, 40002, 'status must be 0 or 1');
        }
        profile.filters.set(filter as string, body.status);
        return ok({ filters: [...profile.filters].filter(([, s]) => s === 1).map(([pk]) => pk) });
      }),
    },
    {
      method: 'GET',
      path: /^\/profiles\/([^/]+)\/services$/,
      reference: `${REFERENCE} Services - List`,
      serve: this.inProfile((profile) =>
        ok({
          services: [...profile.services].map(([PK, action]) => ({ PK, name: PK, action })),
        }),
      ),
    },
    {
      method: 'PUT',
      path: /^\/profiles\/([^/]+)\/services\/([^/]+)$/,
      reference: `${REFERENCE} Services - Modify`,
      serve: this.inProfile((profile, request, [service]) => {
        const body = bodyOf(request);
        if (!SERVICES.includes(service as string)) {
          return refuse(404, 40403, 'Service does not exist');
        }
        if (!isAction(body)) {
          return refuse(400, 40003, 'do and status are required');
        }
        profile.services.set(service as string, { do: body.do, status: body.status });
        return ok({ services: [{ do: body.do, status: body.status }] });
      }),
    },
    {
      method: 'GET',
      path: /^\/profiles\/([^/]+)\/groups$/,
      reference: `${REFERENCE} Rule Folders - List`,
      serve: this.inProfile((profile) =>
        ok({
          groups: [...profile.groups].map(([PK, folder]) => ({
            PK,
            ...folder,
            count: this.rulesIn(profile, PK).length,
          })),
        }),
      ),
    },
    {
      // The reference's "folder ID (0 or omit for root)": the root is read with it omitted.
      method: 'GET',
      path: /^\/profiles\/([^/]+)\/rules$/,
      reference: `${REFERENCE} Custom Rules - List`,
      serve: this.inProfile((profile) => ok({ rules: this.rulesIn(profile, 0) })),
    },
    {
      // Folder 0 answers as Control D is recorded answering it: no such folder.
      method: 'GET',
      path: /^\/profiles\/([^/]+)\/rules\/(\d+)$/,
      reference: `${REFERENCE} Custom Rules - List`,
      serve: this.inProfile((profile, _request, [folder]) =>
        profile.groups.has(Number(folder))
          ? ok({ rules: this.rulesIn(profile, Number(folder)) })
          : refuse(404, 40406, 'No such group exists.'),
      ),
    },
    {
      method: 'POST',
      path: /^\/profiles\/([^/]+)\/rules$/,
      reference: `${REFERENCE} Custom Rules - Create`,
      serve: this.inProfile((profile, request) => {
        const body = bodyOf(request);
        const write = ruleWrite(body);
        if (!('action' in write)) {
          return write;
        }
        const { action, hostnames } = write;
        const group = Number(body.group ?? 0);
        if (group !== 0 && !profile.groups.has(group)) {
          return refuse(400, 40003, 'This folder does not exist');
        }
        const taken = hostnames.find((host) => profile.rules.has(host));
        if (taken) {
          return refuse(400, 40006, `Rule for ${taken} already exists`);
        }
        for (const host of hostnames) {
          profile.rules.set(host, { ...action, group });
        }
        return ok({ rules: [{ ...action, group }] });
      }),
    },
    {
      method: 'PUT',
      path: /^\/profiles\/([^/]+)\/rules$/,
      reference: `${REFERENCE} Custom Rules - Modify`,
      serve: this.inProfile((profile, request) => {
        const write = ruleWrite(bodyOf(request));
        if (!('action' in write)) {
          return write;
        }
        const { action, hostnames } = write;
        const missing = hostnames.find((host) => !profile.rules.has(host));
        if (missing) {
          return refuse(404, 40404, `Rule for ${missing} does not exist`);
        }
        for (const host of hostnames) {
          const rule = profile.rules.get(host) as Action & { group: number };
          profile.rules.set(host, { ...action, group: rule.group });
        }
        return ok({ rules: [action] });
      }),
    },
    {
      method: 'DELETE',
      path: /^\/profiles\/([^/]+)\/rules\/([^/]+)$/,
      reference: `${REFERENCE} Custom Rules - Delete`,
      serve: this.inProfile((profile, _request, [host]) => {
        if (!profile.rules.delete(host as string)) {
          return refuse(404, 40404, 'Rule does not exist');
        }
        return ok([], 'Custom rule(s) deleted');
      }),
    },
    {
      method: 'GET',
      path: /^\/profiles\/([^/]+)\/default$/,
      reference: `${REFERENCE} Default Rule - List`,
      serve: this.inProfile((profile) => ok({ default: profile.default ?? [] })),
    },
    {
      method: 'PUT',
      path: /^\/profiles\/([^/]+)\/default$/,
      reference: `${REFERENCE} Default Rule - Modify`,
      serve: this.inProfile((profile, request) => {
        const body = bodyOf(request);
        if (!isAction(body)) {
          return refuse(400, 40003, 'do and status are required');
        }
        profile.default = { do: body.do, status: body.status };
        return ok({ default: profile.default });
      }),
    },
  ];
}
