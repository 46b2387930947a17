// Control D over its public API (https://docs.controld.com/reference), through the routes that
// reference documents and no others: the profile's option values come with the profile in the
// listing (GET /profiles), its filters, services, custom rules (the root folder and each rule
// folder) and default rule from their own lists, and the changes converge.ts asks for, each as
// one call. What the documentation leaves open is in docs/decisions.md ("NextDNS and Control D").

import type { Telemetry } from '../../../telemetry/telemetry.js';
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

/** A profile as GET /profiles lists it: its option values are `profile.opt.data`. */
interface ListedProfile {
  PK?: string;
  profile?: { opt?: { data?: Array<{ PK: string; value?: unknown }> } };
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
  telemetry?: Telemetry,
): PartnerClient {
  const http = createPartnerHttp({
    partner: 'Control D',
    platform: 'controld',
    telemetry,
    baseUrl,
    headers: { authorization: `Bearer ${credentials.api_token}` },
    ...PARTNER_HTTP_DEFAULTS,
    ...tuning,
    errorText,
  });
  const profileId = credentials.profile_id as string;
  const profile = `/profiles/${encodeURIComponent(profileId)}`;

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
      const { kind, host, action } = ruleParts(key);
      if (kind === 'services') {
        await call('PUT', `${profile}/services/${encodeURIComponent(host)}`, { do: 0, status: 1 });
        return;
      }
      // A custom rule is modified by hostname in the body; there is no route per rule to PUT.
      await call('PUT', `${profile}/rules`, { do: action, status: 1, hostnames: [host] });
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
      // The listing is read first: it answers a refused token, and a profile missing from it
      // is one these credentials cannot reach.
      const listed = await list<ListedProfile>('/profiles', 'profiles');
      const own = listed.find((candidate) => candidate.PK === profileId);
      if (!own) {
        throw new PartnerError(
          'not_found',
          200,
          `Control D does not list profile "${profileId}" in GET /profiles`,
        );
      }
      const options = own.profile?.opt?.data ?? [];
      const [filters, services, rootRules, folders, defaultRule] = await Promise.all([
        list<{ PK: string; status?: number }>(`${profile}/filters`, 'filters'),
        list<{ PK: string; action?: Action }>(`${profile}/services`, 'services'),
        list<{ PK: string; action?: Action }>(`${profile}/rules`, 'rules'),
        list<{ PK: number; action?: Action }>(`${profile}/groups`, 'groups'),
        call<{ default?: Action | unknown[] }>('GET', `${profile}/default`),
      ]);
      // The root listing leaves out the rules in folders; each folder lists its own, and a rule
      // with no `do` of its own takes its folder's. A folder deleted since it was listed took
      // its rules with it.
      const foldered = await Promise.all(
        folders.map(async (folder) => {
          const path = `${profile}/rules/${encodeURIComponent(String(folder.PK))}`;
          const inFolder = await list<{ PK: string; action?: Action }>(path, 'rules').catch(
            (error: unknown) => {
              if (error instanceof PartnerError && error.kind === 'not_found') {
                return [];
              }
              throw error;
            },
          );
          return inFolder.map((rule) => ({
            ...rule,
            action: { do: folder.action?.do, ...rule.action },
          }));
        }),
      );
      const rules = [...rootRules, ...foldered.flat()];
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
