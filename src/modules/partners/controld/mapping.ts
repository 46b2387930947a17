// Which Control D setting each rule category drives. Keys name what converge.ts
// manages: `filters.<id>` native filters and `options.<id>` profile options (on or off),
// `default` the profile's default rule, `services:<id>` blocked services and
// `rules.block:<host>` / `rules.bypass:<host>` custom rules. A category missing here has no
// Control D equivalent: its rules are counted rules_skipped. docs/decisions.md carries this
// table ("The mapping"), checked against it by mapping-table.test.ts.
import type { PartnerMapping, Wanted } from '../converge.js';
import { anyOn, BYPASS_FIELDS, lookedUp, servicesOf, stringsOf, whenOn } from '../rule-config.js';

/**
 * Service ids Haven blocks by name. Control D documents its catalog only through
 * GET /services/categories/{category}; these are the ids of the services parents name most,
 * as its catalog spells them (docs/decisions.md: which were seen and which are assumed).
 */
export const CONTROLD_SERVICES = [
  'discord',
  'facebook',
  'fortnite',
  'instagram',
  'messenger',
  'minecraft',
  'netflix',
  'pinterest',
  'primevideo',
  'reddit',
  'roblox',
  'snapchat',
  'spotify',
  'steam',
  'telegram',
  'tiktok',
  'tinder',
  'twitch',
  'twitter',
  'whatsapp',
  'youtube',
] as const;

const filter = (...ids: string[]): Wanted => ({
  settings: Object.fromEntries(ids.map((id) => [`filters.${id}`, true])),
});

const WEB_CATEGORIES: Record<string, Wanted> = {
  adult: filter('porn'),
  gambling: filter('gambling'),
  dating: filter('dating'),
  drugs: filter('drugs'),
  social_media: filter('social'),
  piracy: filter('torrents'),
  proxies_vpn: filter('dnsvpn'),
  malware_phishing: filter('malware', 'typo'),
};

const FILTER_LEVELS: Record<string, Wanted> = {
  light: filter('porn'),
  moderate: {
    settings: {
      ...filter('porn', 'gambling', 'dating', 'drugs').settings,
      'options.safesearch': true,
    },
  },
  strict: {
    settings: {
      ...filter('porn', 'gambling', 'dating', 'drugs', 'social', 'dnsvpn').settings,
      'options.safesearch': true,
      'options.safeyoutube': true,
    },
  },
};

/** An app as Control D names its services ("TikTok" → tiktok). */
const controldServiceId = (app: string) =>
  app
    .toLowerCase()
    .replace(/\+/g, 'plus')
    .replace(/[^a-z0-9]/g, '');

/** The default rule that turns the profile into an allowlist: block what no rule bypasses. */
export const BLOCK_BY_DEFAULT = { do: 0, status: 1 };

export const CONTROLD_MAPPING: PartnerMapping = {
  web_safesearch: {
    drives: 'options.safesearch',
    map: (config) => whenOn(config.enabled, { settings: { 'options.safesearch': true } }),
  },
  content_restricted_mode: {
    drives: 'options.safeyoutube',
    map: (config) => whenOn(config.enabled, { settings: { 'options.safeyoutube': true } }),
  },
  web_bypass_block: {
    drives: 'filters.dnsvpn (any of block_vpn, block_proxies, block_encrypted_dns)',
    map: (config) => whenOn(anyOn(config, BYPASS_FIELDS), filter('dnsvpn')),
  },
  web_category_block: {
    drives:
      'native filters (adult→porn, gambling, dating, drugs, social_media→social, piracy→torrents, proxies_vpn→dnsvpn, malware_phishing→malware + typo); the other categories have no Control D filter',
    map: (config) => lookedUp(config, 'categories', WEB_CATEGORIES),
  },
  web_filter_level: {
    drives:
      'native filters + options (light: porn; moderate: porn, gambling, dating, drugs, safesearch; strict: moderate + social, dnsvpn, safeyoutube)',
    map: (config) => FILTER_LEVELS[config.level as string] ?? {},
  },
  web_custom_blocklist: {
    drives: 'custom rules, block (do 0), one per hostname',
    map: (config) => ({
      items: stringsOf(config, 'domains').map((d) => `rules.block:${d.toLowerCase()}`),
    }),
  },
  web_custom_allowlist: {
    drives: 'custom rules, bypass (do 1), one per hostname',
    map: (config) => ({
      items: stringsOf(config, 'domains').map((d) => `rules.bypass:${d.toLowerCase()}`),
    }),
  },
  web_allowlist_only: {
    drives: 'default rule: block (do 0), so only bypass rules resolve',
    map: (config) => whenOn(config.enabled, { settings: { default: BLOCK_BY_DEFAULT } }),
  },
  content_gambling_block: {
    drives: 'filters.gambling',
    map: (config) =>
      whenOn(anyOn(config, ['block_real_money', 'block_simulated']), filter('gambling')),
  },
  app_block_list: {
    drives: 'services, block (do 0) (apps named as a Control D service, e.g. tiktok, roblox)',
    map: (config) => ({
      items: servicesOf(config, CONTROLD_SERVICES, controldServiceId).map((id) => `services:${id}`),
    }),
  },
  third_party_tracking_block: {
    drives: 'filters.ads',
    map: (config) => whenOn(config.block_trackers, filter('ads')),
  },
  targeted_ad_block: {
    drives: 'filters.ads',
    map: (config) => whenOn(config.block_targeted_ads, filter('ads')),
  },
};
