// Which NextDNS setting each rule category drives. Keys name what converge.ts
// manages: `<list>:<id>` for entries of a profile list, `<object>.<field>` for settings.
// A category missing here has no NextDNS equivalent: its rules are counted rules_skipped.
// docs/decisions.md carries this table ("The mapping"), checked by mapping-table.test.ts.
import type { PartnerMapping, Wanted } from '../converge.js';
import { anyOn, BYPASS_FIELDS, lookedUp, servicesOf, stringsOf, whenOn } from '../rule-config.js';

/** The parental-control categories NextDNS has (its whole catalog). */
export const NEXTDNS_CATEGORIES = [
  'porn',
  'gambling',
  'dating',
  'piracy',
  'social-networks',
  'gaming',
  'video-streaming',
] as const;

/** NextDNS's parental-control services (GET /parentalControl/services, 43 when written). */
export const NEXTDNS_SERVICES = [
  '9gag',
  'amazon',
  'bereal',
  'blizzard',
  'chatgpt',
  'dailymotion',
  'discord',
  'disneyplus',
  'ebay',
  'facebook',
  'fortnite',
  'google-chat',
  'hbomax',
  'hulu',
  'imgur',
  'instagram',
  'leagueoflegends',
  'mastodon',
  'messenger',
  'minecraft',
  'netflix',
  'pinterest',
  'playstation-network',
  'primevideo',
  'reddit',
  'roblox',
  'signal',
  'skype',
  'snapchat',
  'spotify',
  'steam',
  'telegram',
  'tiktok',
  'tinder',
  'tumblr',
  'twitch',
  'twitter',
  'vimeo',
  'vk',
  'whatsapp',
  'xboxlive',
  'youtube',
  'zoom',
] as const;

/** Haven's web categories (web_category_block) and what each becomes on NextDNS. */
const WEB_CATEGORIES: Record<string, Wanted> = {
  adult: { items: ['parentalControl.categories:porn'] },
  gambling: { items: ['parentalControl.categories:gambling'] },
  dating: { items: ['parentalControl.categories:dating'] },
  piracy: { items: ['parentalControl.categories:piracy'] },
  social_media: { items: ['parentalControl.categories:social-networks'] },
  gaming: { items: ['parentalControl.categories:gaming'] },
  video_streaming: { items: ['parentalControl.categories:video-streaming'] },
  proxies_vpn: { settings: { 'parentalControl.blockBypass': true } },
  malware_phishing: {
    settings: { 'security.threatIntelligenceFeeds': true, 'security.googleSafeBrowsing': true },
  },
};

const FILTER_LEVELS: Record<string, Wanted> = {
  light: { items: ['parentalControl.categories:porn'] },
  moderate: {
    items: ['porn', 'gambling', 'dating', 'piracy'].map((id) => `parentalControl.categories:${id}`),
    settings: { 'parentalControl.safeSearch': true },
  },
  strict: {
    items: ['porn', 'gambling', 'dating', 'piracy', 'social-networks'].map(
      (id) => `parentalControl.categories:${id}`,
    ),
    settings: {
      'parentalControl.safeSearch': true,
      'parentalControl.youtubeRestrictedMode': true,
      'parentalControl.blockBypass': true,
    },
  },
};

/** A rule's domain as a NextDNS entry: it covers subdomains already, so `*.` goes. */
export function nextdnsDomain(domain: string): string {
  return domain.replace(/^\*\./, '').toLowerCase();
}

/** An app as NextDNS names its services ("TikTok", "Disney+" → tiktok, disneyplus). */
const nextdnsServiceId = (app: string) =>
  app
    .toLowerCase()
    .replace(/\+/g, 'plus')
    .replace(/[^a-z0-9-]/g, '');

/** "HH:MM" to NextDNS's "HH:MM:SS"; the end of the day, 24:00, is its last second. */
function clock(time: string): string {
  return time === '24:00' ? '23:59:59' : `${time}:00`;
}

type Window = { start: string; end: string };
const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'];
const WEEKEND = ['saturday', 'sunday'];

function recreationTimes(schedule: { weekday: Window; weekend: Window }) {
  const times: Record<string, { start: string; end: string }> = {};
  for (const [days, window] of [
    [WEEKDAYS, schedule.weekday],
    [WEEKEND, schedule.weekend],
  ] as const) {
    for (const day of days) {
      times[day] = { start: clock(window.start), end: clock(window.end) };
    }
  }
  return times;
}

export const NEXTDNS_MAPPING: PartnerMapping = {
  web_safesearch: {
    drives: 'parentalControl.safeSearch',
    map: (config) => whenOn(config.enabled, { settings: { 'parentalControl.safeSearch': true } }),
  },
  content_restricted_mode: {
    drives: 'parentalControl.youtubeRestrictedMode',
    map: (config) =>
      whenOn(config.enabled, { settings: { 'parentalControl.youtubeRestrictedMode': true } }),
  },
  web_bypass_block: {
    drives: 'parentalControl.blockBypass (any of block_vpn, block_proxies, block_encrypted_dns)',
    map: (config) =>
      whenOn(anyOn(config, BYPASS_FIELDS), { settings: { 'parentalControl.blockBypass': true } }),
  },
  web_category_block: {
    drives:
      'parentalControl.categories (adult→porn, gambling, dating, piracy, social_media→social-networks, gaming, video_streaming→video-streaming); proxies_vpn→parentalControl.blockBypass; malware_phishing→security.threatIntelligenceFeeds + googleSafeBrowsing; the other categories have no NextDNS equivalent',
    map: (config) => lookedUp(config, 'categories', WEB_CATEGORIES),
  },
  web_filter_level: {
    drives:
      'parentalControl.categories + safeSearch (light: porn; moderate: porn, gambling, dating, piracy, safeSearch; strict: moderate + social-networks, youtubeRestrictedMode, blockBypass)',
    map: (config) => FILTER_LEVELS[config.level as string] ?? {},
  },
  web_custom_blocklist: {
    drives: 'denylist (one entry per domain; `*.` dropped, NextDNS entries cover subdomains)',
    map: (config) => ({
      items: stringsOf(config, 'domains').map((d) => `denylist:${nextdnsDomain(d)}`),
    }),
  },
  web_custom_allowlist: {
    drives: 'allowlist (one entry per domain)',
    map: (config) => ({
      items: stringsOf(config, 'domains').map((d) => `allowlist:${nextdnsDomain(d)}`),
    }),
  },
  content_gambling_block: {
    drives: 'parentalControl.categories: gambling',
    map: (config) =>
      whenOn(anyOn(config, ['block_real_money', 'block_simulated']), {
        items: ['parentalControl.categories:gambling'],
      }),
  },
  app_block_list: {
    drives:
      'parentalControl.services (apps named as a NextDNS service, e.g. tiktok, roblox, disneyplus)',
    map: (config) => ({
      items: servicesOf(config, NEXTDNS_SERVICES, nextdnsServiceId).map(
        (id) => `parentalControl.services:${id}`,
      ),
    }),
  },
  time_scheduled_hours: {
    drives:
      'parentalControl.recreation.times (weekday window Monday-Friday, weekend window Saturday-Sunday)',
    map: (config) => ({
      settings: {
        'parentalControl.recreation.times': recreationTimes(
          config.schedule as { weekday: Window; weekend: Window },
        ),
      },
    }),
  },
  third_party_tracking_block: {
    drives: 'privacy.blocklists: nextdns-recommended; privacy.disguisedTrackers',
    map: (config) =>
      whenOn(config.block_trackers, {
        items: ['privacy.blocklists:nextdns-recommended'],
        settings: { 'privacy.disguisedTrackers': true },
      }),
  },
  targeted_ad_block: {
    drives: 'privacy.blocklists: nextdns-recommended',
    map: (config) =>
      whenOn(config.block_targeted_ads, { items: ['privacy.blocklists:nextdns-recommended'] }),
  },
  csam_reporting: {
    drives: 'security.csam',
    map: (config) => whenOn(config.hash_matching, { settings: { 'security.csam': true } }),
  },
};
