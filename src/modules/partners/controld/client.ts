// Control D over its public API (https://docs.controld.com/reference): a profile read as its
// filters, services, custom rules, default rule and options, and the changes converge.ts asks
// for, each as one call. What the documentation leaves open is in docs/decisions.md
// ("NextDNS and Control D").
import type { ProfileSnapshot, ProfileWriter } from '../converge.js';
import type { PartnerClient, PartnerCredentials, PartnerDefinition } from '../live-adapter.js';
import {
  createPartnerHttp,
  goneIsDone,
  PARTNER_HTTP_DEFAULTS,
  PartnerError,
  type PartnerErrorKind,
  type PartnerHttpTuning,
} from '../partner-http.js';
import { CONTROLD_MAPPING } from './mapping.js';

interface Envelope<T> {
  body?: T;
  success?: boolean;
  message?: string;
  error?: { message?: string; code?: number };
}

interface Action {
  do?: number;
  status?: number;
}

/** Unset options and default rule read as what they mean: off, and resolve everything. */
const OPTIONS = ['safesearch', 'safeyoutube'] as const;
const RESOLVE_BY_DEFAULT = { do: 1, status: 1 };

function errorText(body: unknown): string | undefined {
  const error = (body as Envelope<unknown> | undefined)?.error;
  if (error?.message) {
    return error.code === undefined ? error.message : `${error.message} (code ${error.code})`;
  }
  return typeof body === 'string' && body !== '' ? body : undefined;
}

/** Control D's error codes start with the HTTP status they stand for (40401 → 404). */
function kindOfCode(code: number | undefined): PartnerErrorKind {
  const status = Number(String(code ?? '').slice(0, 3));
  if (status === 401 || status === 403) {
    return 'credentials';
  }
  return status === 404 ? 'not_found' : 'rejected';
}

const onOff = (value: unknown) => (value === true ? 1 : 0);

export function controldClient(
  credentials: PartnerCredentials,
  baseUrl: string,
  tuning: PartnerHttpTuning,
): PartnerClient {
  const http = createPartnerHttp({
    partner: 'Control D',
    baseUrl,
    headers: { authorization: `Bearer ${credentials.api_token}` },
    ...PARTNER_HTTP_DEFAULTS,
    ...tuning,
    errorText,
  });
  const profile = `/profiles/${encodeURIComponent(credentials.profile_id as string)}`;

  /** The `body` of a successful answer; `success: false` under a 200 is a refusal too. */
  async function call<T>(method: string, path: string, body?: unknown): Promise<T | undefined> {
    const answer = await http<Envelope<T>>(method, path, body);
    if (answer && answer.success === false) {
      throw new PartnerError(
        kindOfCode(answer.error?.code),
        200,
        `Control D refused ${method} ${path}: ${errorText(answer) ?? 'success: false'}`,
      );
    }
    return answer?.body;
  }

  const list = async <T>(path: string, name: string): Promise<T[]> => {
    const body = await call<Record<string, unknown>>('GET', path);
    const items = body?.[name];
    return Array.isArray(items) ? (items as T[]) : [];
  };

  function ruleParts(key: string) {
    const [kind, host] = [key.slice(0, key.indexOf(':')), key.slice(key.indexOf(':') + 1)];
    return { kind, host, action: kind === 'rules.block' ? 0 : 1 };
  }

  const writer: ProfileWriter = {
    async addItem(key) {
      const { kind, host, action } = ruleParts(key);
      if (kind === 'services') {
        await call('PUT', `${profile}/services/${encodeURIComponent(host)}`, { do: 0, status: 1 });
        return;
      }
      await call('POST', `${profile}/rules`, { do: action, status: 1, hostnames: [host] });
    },
    async activateItem(key) {
      const { kind, host } = ruleParts(key);
      if (kind === 'services') {
        await call('PUT', `${profile}/services/${encodeURIComponent(host)}`, { do: 0, status: 1 });
        return;
      }
      await call('PUT', `${profile}/rules/${encodeURIComponent(host)}`, { status: 1 });
    },
    async removeItem(key) {
      const { kind, host } = ruleParts(key);
      const path =
        kind === 'services'
          ? `${profile}/services/${encodeURIComponent(host)}`
          : `${profile}/rules/${encodeURIComponent(host)}`;
      // A service rule is switched off, not deleted: the API has no delete for it.
      await goneIsDone(
        kind === 'services' ? call('PUT', path, { do: 0, status: 0 }) : call('DELETE', path),
      );
    },
    async setSetting(key, value) {
      if (key === 'default') {
        await call('PUT', `${profile}/default`, value);
        return;
      }
      const [group, id] = key.split('.') as ['filters' | 'options', string];
      const path =
        group === 'filters'
          ? `${profile}/filters/filter/${encodeURIComponent(id)}`
          : `${profile}/options/${encodeURIComponent(id)}`;
      await call('PUT', path, { status: onOff(value) });
    },
  };

  return {
    async snapshot(): Promise<ProfileSnapshot> {
      const filters = await list<{ PK: string; status?: number }>(`${profile}/filters`, 'filters');
      const [services, rules, options, defaultRule] = await Promise.all([
        list<{ PK: string; action?: Action }>(`${profile}/services`, 'services'),
        list<{ PK: string; action?: Action }>(`${profile}/rules/all`, 'rules'),
        list<{ PK: string; value?: unknown }>(`${profile}/options`, 'options'),
        call<{ default?: Action | unknown[] }>('GET', `${profile}/default`),
      ]);
      const items = new Map<string, { active: boolean }>();
      for (const service of services) {
        // Any active action (block or bypass) is the parent's decision about that service.
        if (service.action?.status === 1) {
          items.set(`services:${service.PK}`, { active: true });
        }
      }
      for (const rule of rules) {
        const kind =
          rule.action?.do === 0
            ? 'rules.block'
            : rule.action?.do === 1
              ? 'rules.bypass'
              : undefined;
        if (kind) {
          items.set(`${kind}:${rule.PK}`, { active: rule.action?.status === 1 });
        }
      }
      const settings = new Map<string, unknown>();
      for (const filter of filters) {
        settings.set(`filters.${filter.PK}`, filter.status === 1);
      }
      for (const option of OPTIONS) {
        const set = options.find((candidate) => candidate.PK === option);
        settings.set(`options.${option}`, set !== undefined && Number(set.value ?? 1) !== 0);
      }
      const current = defaultRule?.default;
      settings.set(
        'default',
        current && !Array.isArray(current) && typeof (current as Action).do === 'number'
          ? { do: (current as Action).do, status: (current as Action).status ?? 1 }
          : RESOLVE_BY_DEFAULT,
      );
      return { items, settings };
    },
    writer,
  };
}

export const CONTROLD: PartnerDefinition = {
  platformId: 'controld',
  name: 'Control D',
  credentialFields: ['api_token', 'profile_id'],
  mapping: CONTROLD_MAPPING,
  client: controldClient,
};
