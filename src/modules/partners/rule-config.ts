// Reading a rule's config the way both partner mappings do: a switch that is on, a list of
// strings, and a list of values each looked up in a partner's table.
import type { Wanted } from './converge.js';

/** web_bypass_block's switches that a partner's bypass block answers. */
export const BYPASS_FIELDS = ['block_vpn', 'block_proxies', 'block_encrypted_dns'] as const;

/** `wanted` when the flag is on; nothing otherwise (Haven then lets go of the setting). */
export function whenOn(flag: unknown, wanted: Wanted): Wanted {
  return flag === true ? wanted : {};
}

/** True when any of the config's boolean fields is on. */
export function anyOn(config: Record<string, unknown>, fields: readonly string[]): boolean {
  return fields.some((field) => config[field] === true);
}

/** A config field that holds a list of strings (the registry's schema guarantees it). */
export function stringsOf(config: Record<string, unknown>, field: string): string[] {
  const value = config[field];
  return Array.isArray(value) ? (value as string[]) : [];
}

/** Every value of a list field looked up in a partner's table, merged; unknown values add nothing. */
export function lookedUp(
  config: Record<string, unknown>,
  field: string,
  table: Record<string, Wanted>,
): Wanted {
  const parts = stringsOf(config, field).flatMap((value) => table[value] ?? []);
  return {
    items: parts.flatMap((part) => part.items ?? []),
    settings: Object.assign({}, ...parts.map((part) => part.settings ?? {})),
  };
}

/** The apps of an app_block_list that a partner names as services, by its ids. */
export function servicesOf(
  config: Record<string, unknown>,
  catalog: readonly string[],
  normalize: (app: string) => string,
): string[] {
  return stringsOf(config, 'apps')
    .map(normalize)
    .filter((id) => catalog.includes(id));
}
