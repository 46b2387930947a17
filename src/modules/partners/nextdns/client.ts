// NextDNS over its public API (https://nextdns.github.io/api/): the profile read as one
// document, and the changes converge.ts asks for, each as the smallest call that makes it.
// What the documentation leaves open is in docs/decisions.md ("NextDNS and Control D").

import type { Telemetry } from '../../../telemetry/telemetry.js';
import type { ProfileSnapshot, ProfileWriter } from '../converge.js';
import type { PartnerClient, PartnerCredentials, PartnerDefinition } from '../live-adapter.js';
import {
  createPartnerHttp,
  goneIsDone,
  PARTNER_HTTP_DEFAULTS,
  PartnerError,
  type PartnerHttpTuning,
} from '../partner-http.js';
import { NEXTDNS_MAPPING } from './mapping.js';

interface NextDnsError {
  code?: string;
  detail?: string;
  source?: { parameter?: string; pointer?: string };
}

interface ListEntry {
  id: string;
  active?: boolean;
}

interface NextDnsProfile {
  parentalControl?: {
    safeSearch?: boolean;
    youtubeRestrictedMode?: boolean;
    blockBypass?: boolean;
    services?: ListEntry[];
    categories?: ListEntry[];
    recreation?: { times?: Record<string, unknown>; timezone?: string | null };
  };
  security?: Record<string, unknown>;
  privacy?: Record<string, unknown> & { blocklists?: ListEntry[] };
  denylist?: ListEntry[];
  allowlist?: ListEntry[];
}

/** The lists Haven manages entries of, by the key prefix converge.ts uses. */
const LISTS = [
  'parentalControl.services',
  'parentalControl.categories',
  'privacy.blocklists',
  'denylist',
  'allowlist',
] as const;

/** Settings Haven may manage, by key: `<object>.<field>[.<field>]`. */
const SETTINGS = [
  'parentalControl.safeSearch',
  'parentalControl.youtubeRestrictedMode',
  'parentalControl.blockBypass',
  'parentalControl.recreation.times',
  'security.threatIntelligenceFeeds',
  'security.googleSafeBrowsing',
  'security.csam',
  'privacy.disguisedTrackers',
] as const;

function errorText(body: unknown): string | undefined {
  const errors = (body as { errors?: NextDnsError[] } | undefined)?.errors;
  if (!Array.isArray(errors) || errors.length === 0) {
    return typeof body === 'string' && body !== '' ? body : undefined;
  }
  return errors
    .map((error) => {
      const where = error.source?.pointer ?? error.source?.parameter;
      return [error.code, error.detail, where ? `at ${where}` : undefined]
        .filter(Boolean)
        .join(' ');
    })
    .join(', ');
}

function valueAt(document: unknown, path: string[]): unknown {
  let value: unknown = document;
  for (const part of path) {
    value = (value as Record<string, unknown> | undefined)?.[part];
  }
  return value;
}

function nested(path: string[], value: unknown): Record<string, unknown> {
  return path.reduceRight<Record<string, unknown>>(
    (inner, part) => ({ [part]: inner }),
    value as Record<string, unknown>,
  );
}

/** `parentalControl.categories:porn` → its collection path and entry id. */
function splitItem(key: string): { list: string; id: string } {
  const at = key.indexOf(':');
  return { list: key.slice(0, at).replaceAll('.', '/'), id: key.slice(at + 1) };
}

export function nextdnsClient(
  credentials: PartnerCredentials,
  baseUrl: string,
  tuning: PartnerHttpTuning,
  telemetry?: Telemetry,
): PartnerClient {
  const http = createPartnerHttp({
    partner: 'NextDNS',
    platform: 'nextdns',
    telemetry,
    baseUrl,
    headers: { 'x-api-key': credentials.api_key as string },
    ...PARTNER_HTTP_DEFAULTS,
    ...tuning,
    errorText,
  });
  const profile = `/profiles/${encodeURIComponent(credentials.profile_id as string)}`;
  let timezone: string | null | undefined;

  /**
   * NextDNS answers some refusals with 200 and an `errors` body; a `duplicate` on adding an
   * entry means it is there already, which is what was wanted.
   */
  async function call(method: string, path: string, body?: unknown): Promise<unknown> {
    const answer = await http<{ data?: unknown; errors?: NextDnsError[] }>(method, path, body);
    const errors = answer?.errors;
    if (Array.isArray(errors) && errors.length > 0) {
      if (method === 'POST' && errors.every((error) => error.code === 'duplicate')) {
        return undefined;
      }
      throw new PartnerError(
        'rejected',
        200,
        `NextDNS refused ${method} ${path}: ${errorText(answer)}`,
      );
    }
    return answer?.data;
  }

  const writer: ProfileWriter = {
    async addItem(key) {
      const { list, id } = splitItem(key);
      const entry = list.startsWith('parentalControl/')
        ? { id, active: true, recreation: false }
        : list === 'privacy/blocklists'
          ? { id }
          : { id, active: true };
      await call('POST', `${profile}/${list}`, entry);
    },
    async activateItem(key) {
      const { list, id } = splitItem(key);
      await call('PATCH', `${profile}/${list}/${encodeURIComponent(id)}`, { active: true });
    },
    async removeItem(key) {
      const { list, id } = splitItem(key);
      await goneIsDone(call('DELETE', `${profile}/${list}/${encodeURIComponent(id)}`));
    },
    async setSetting(key, value) {
      const [object, ...path] = key.split('.') as [string, ...string[]];
      const body = nested(path, value);
      // Recreation times mean nothing without a time zone: a profile with none gets UTC
      // (docs/decisions.md); one the parent set is kept.
      if (key === 'parentalControl.recreation.times' && !timezone) {
        (body.recreation as Record<string, unknown>).timezone = 'UTC';
      }
      await call('PATCH', `${profile}/${object}`, body);
    },
  };

  return {
    async snapshot(): Promise<ProfileSnapshot> {
      const document = ((await call('GET', profile)) ?? {}) as NextDnsProfile;
      timezone = document.parentalControl?.recreation?.timezone;
      const items = new Map<string, { active: boolean }>();
      for (const list of LISTS) {
        const entries = valueAt(document, list.split('.'));
        for (const entry of Array.isArray(entries) ? (entries as ListEntry[]) : []) {
          items.set(`${list}:${entry.id}`, { active: entry.active !== false });
        }
      }
      const settings = new Map<string, unknown>();
      for (const key of SETTINGS) {
        settings.set(key, valueAt(document, key.split('.')));
      }
      return { items, settings };
    },
    writer,
  };
}

export const NEXTDNS: PartnerDefinition = {
  platformId: 'nextdns',
  name: 'NextDNS',
  credentialFields: ['api_key', 'profile_id'],
  mapping: NEXTDNS_MAPPING,
  client: nextdnsClient,
};
