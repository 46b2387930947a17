// A Control D double, written from its public API reference (https://docs.controld.com/
// reference) and the behaviour its clients record (docs/decisions.md "NextDNS and Control D"):
// Bearer tokens; {body, success} answers and {body: [], success: false, error: {message,
// code}} refusals whose code starts with the HTTP status (40401: no such profile); native
// filters and options switched with {status}; services and custom rules with {do, status}.
import { CONTROLD_SERVICES } from '../../src/modules/partners/controld/mapping.js';
import { type DoubleAnswer, type DoubleRequest, DoubleServer } from './double-server.js';

export interface Action {
  do: number;
  status: number;
}

export interface ControlDProfile {
  PK: string;
  name: string;
  filters: Map<string, number>;
  services: Map<string, Action>;
  rules: Map<string, Action & { group: number }>;
  default: Action | null;
  options: Map<string, string>;
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
const OPTIONS = ['safesearch', 'safeyoutube', 'block_rfc1918', 'ai_malware'];
const SERVICES = [...CONTROLD_SERVICES, 'amazonmusic', 'applemusic', 'soundcloud'];
const HOSTNAME = /^(?:\*\.)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

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
      default: null,
      options: new Map(),
    };
    this.profiles.set(id, profile);
    return profile;
  }

  protected malformed() {
    return { body: [], success: false, error: { message: 'Malformed request body', code: 40001 } };
  }

  protected handle(request: DoubleRequest): DoubleAnswer {
    if (request.headers.authorization !== `Bearer ${this.token}`) {
      return refuse(401, 40101, 'Invalid or expired API token');
    }
    const match = /^\/profiles\/([^/]+)\/(.+)$/.exec(request.path);
    if (!match) {
      return refuse(404, 40400, 'Not found');
    }
    const profile = this.profiles.get(decodeURIComponent(match[1] as string));
    if (!profile) {
      return refuse(404, 40401, 'This profile does not exist');
    }
    const [resource, ...rest] = (match[2] as string).split('/').map(decodeURIComponent);
    const body = (request.body ?? {}) as Record<string, unknown>;
    const method = request.method;
    switch (resource) {
      case 'filters': {
        if (method === 'GET' && rest.length === 0) {
          return ok({
            filters: [...profile.filters].map(([PK, status]) => ({ PK, name: PK, status })),
          });
        }
        if (method === 'PUT' && rest[0] === 'filter' && rest[1] !== undefined) {
          if (!profile.filters.has(rest[1])) {
            return refuse(404, 40402, 'Filter does not exist');
          }
          if (body.status !== 0 && body.status !== 1) {
            return refuse(400, 40002, 'status must be 0 or 1');
          }
          profile.filters.set(rest[1], body.status);
          return ok({ filters: [...profile.filters].filter(([, s]) => s === 1).map(([pk]) => pk) });
        }
        break;
      }
      case 'services': {
        if (method === 'GET' && rest.length === 0) {
          return ok({
            services: [...profile.services].map(([PK, action]) => ({ PK, name: PK, action })),
          });
        }
        if (method === 'PUT' && rest.length === 1) {
          if (!SERVICES.includes(rest[0] as string)) {
            return refuse(404, 40403, 'Service does not exist');
          }
          if (!isAction(body)) {
            return refuse(400, 40003, 'do and status are required');
          }
          profile.services.set(rest[0] as string, { do: body.do, status: body.status });
          return ok({ services: [{ do: body.do, status: body.status }] });
        }
        break;
      }
      case 'rules': {
        if (method === 'GET' && (rest.length === 0 || rest[0] === 'all')) {
          return ok({
            rules: [...profile.rules]
              .filter(([, rule]) => rest[0] === 'all' || rule.group === 0)
              .map(([PK, { group, ...action }], order) => ({ PK, order, group, action })),
          });
        }
        if (method === 'POST' && rest.length === 0) {
          const hostnames = body.hostnames;
          if (!isAction(body) || !Array.isArray(hostnames) || hostnames.length === 0) {
            return refuse(400, 40004, 'do, status and hostnames are required');
          }
          for (const host of hostnames) {
            if (typeof host !== 'string' || !HOSTNAME.test(host)) {
              return refuse(400, 40005, `Invalid hostname: ${String(host)}`);
            }
            if (profile.rules.has(host)) {
              return refuse(400, 40006, `Rule for ${host} already exists`);
            }
          }
          for (const host of hostnames as string[]) {
            profile.rules.set(host, { do: body.do, status: body.status, group: 0 });
          }
          return ok({ rules: [{ do: body.do, status: body.status, group: 0 }] });
        }
        const host = rest[0] as string;
        const rule = profile.rules.get(host);
        if (rest.length === 1 && !rule) {
          return refuse(404, 40404, 'Rule does not exist');
        }
        if (method === 'DELETE' && rule) {
          profile.rules.delete(host);
          return ok([], 'Custom rule(s) deleted');
        }
        if (method === 'PUT' && rule) {
          if (body.status !== undefined) {
            if (body.status !== 0 && body.status !== 1) {
              return refuse(400, 40002, 'status must be 0 or 1');
            }
            rule.status = body.status;
          }
          return ok({ rules: [{ do: rule.do, status: rule.status }] });
        }
        break;
      }
      case 'default': {
        if (method === 'GET') {
          return ok({ default: profile.default ?? [] });
        }
        if (method === 'PUT') {
          if (!isAction(body)) {
            return refuse(400, 40003, 'do and status are required');
          }
          profile.default = { do: body.do, status: body.status };
          return ok({ default: profile.default });
        }
        break;
      }
      case 'options': {
        if (method === 'GET' && rest.length === 0) {
          return ok({ options: [...profile.options].map(([PK, value]) => ({ PK, value })) });
        }
        if (method === 'PUT' && rest.length === 1) {
          const option = rest[0] as string;
          if (!OPTIONS.includes(option)) {
            return refuse(404, 40405, 'Option does not exist');
          }
          if (body.status === 1) {
            profile.options.set(option, String(body.value ?? '1'));
          } else if (body.status === 0) {
            profile.options.delete(option);
          } else {
            return refuse(400, 40002, 'status must be 0 or 1');
          }
          return ok({ options: [...profile.options].map(([PK, value]) => ({ PK, value })) });
        }
        break;
      }
    }
    return refuse(404, 40400, 'Not found');
  }
}
