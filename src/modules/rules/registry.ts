// The closed vocabulary of 123 rule categories (CONTRACT.md 7.1). The 47 categories DOMAIN.md
// names keep their names and groups; the other 76 are Haven's own, drawn from what parents ask
// for and what child-safety laws require. Data only: a rule's config is checked against
// `config_schema` wherever rules are written.

import type { Capability } from '../platforms/catalog.js';
import { RATING_SYSTEMS, type RatingSystemId } from '../ratings/catalog.js';

export type RuleGroup =
  | 'content'
  | 'time'
  | 'purchase'
  | 'social'
  | 'web'
  | 'privacy'
  | 'monitoring'
  | 'algorithmic_safety'
  | 'notifications'
  | 'advertising_and_data'
  | 'compliance'
  | 'legislation'
  | 'engagement'
  | 'ai_safety'
  | 'apps'
  | 'media';

export interface RuleCategory {
  category: string;
  group: RuleGroup;
  name: string;
  description: string;
  /** JSON Schema (a draft 2020-12 subset) that a rule's `config` must satisfy. */
  config_schema: Record<string, unknown>;
  /** Satisfies `config_schema`: the protective setting a new rule starts from. */
  default_config: Record<string, unknown>;
  engagement: boolean;
  capabilities: Capability[];
}

type JsonSchema = Record<string, unknown>;

// Schema building blocks. Every string is bounded by an enum, a pattern or a maxLength, every
// array by maxItems and every number by a minimum and maximum, so no config can grow unbounded.

const BOOLEAN: JsonSchema = { type: 'boolean' };

/** "HH:MM" on a 24-hour clock; "24:00" is the end of the day (the 17+ weekend bedtime). */
const CLOCK_TIME: JsonSchema = {
  type: 'string',
  pattern: '^(?:(?:[01][0-9]|2[0-3]):[0-5][0-9]|24:00)$',
};

/** A host name, optionally with a leading `*.` for all of its subdomains. */
const DOMAIN_NAME: JsonSchema = {
  type: 'string',
  maxLength: 253,
  pattern:
    '^(?:\\*\\.)?(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+(?:[A-Za-z]{2,63}|xn--[A-Za-z0-9-]{1,59})$',
};

/** ISO 4217 currency code; amounts are integers in the currency's minor unit. */
const CURRENCY: JsonSchema = { type: 'string', pattern: '^[A-Z]{3}$' };

const WEEKDAYS = [
  'monday',
  'tuesday',
  'wednesday',
  'thursday',
  'friday',
  'saturday',
  'sunday',
] as const;

function integer(minimum: number, maximum: number): JsonSchema {
  return { type: 'integer', minimum, maximum };
}

function decimal(minimum: number, maximum: number): JsonSchema {
  return { type: 'number', minimum, maximum };
}

function oneOf(...values: readonly string[]): JsonSchema {
  return { type: 'string', enum: [...values] };
}

function text(maxLength: number): JsonSchema {
  return { type: 'string', minLength: 1, maxLength };
}

function listOf(items: JsonSchema, maxItems: number, minItems = 0): JsonSchema {
  return { type: 'array', items, minItems, maxItems, uniqueItems: true };
}

/** A subset of a fixed list of values. */
function setOf(values: readonly string[], minItems = 0): JsonSchema {
  return listOf(oneOf(...values), values.length, minItems);
}

/** A closed object; every property is required unless listed in `optional`. */
function object(
  properties: Record<string, JsonSchema>,
  optional: readonly string[] = [],
): JsonSchema {
  return {
    type: 'object',
    properties,
    required: Object.keys(properties).filter((key) => !optional.includes(key)),
    additionalProperties: false,
  };
}

/** A closed object of required booleans. */
function flags(...names: readonly string[]): JsonSchema {
  return object(Object.fromEntries(names.map((name) => [name, BOOLEAN])));
}

function ratingCodes(id: RatingSystemId): JsonSchema {
  const system = RATING_SYSTEMS.find((candidate) => candidate.id === id);
  return oneOf(...(system?.ratings ?? []).map((rating) => rating.code));
}

const AUDIENCE = ['none', 'friends_only', 'everyone'] as const;
const CONTACT_AUDIENCE = ['none', 'contacts_only', 'everyone'] as const;
const GATE = ['blocked', 'approval', 'allowed'] as const;
const ALERT_CHANNELS = ['push', 'email', 'sms'] as const;
const APP_IDS: JsonSchema = listOf(text(255), 500);
const TITLES: JsonSchema = listOf(text(255), 500);
const DOMAINS: JsonSchema = listOf(DOMAIN_NAME, 1000);
const WINDOW: JsonSchema = object({ start: CLOCK_TIME, end: CLOCK_TIME });

function rule(
  category: string,
  group: RuleGroup,
  name: string,
  description: string,
  configSchema: JsonSchema,
  defaultConfig: Record<string, unknown>,
  capabilities: Capability[],
): RuleCategory {
  return {
    category,
    group,
    name,
    description,
    config_schema: configSchema,
    default_config: defaultConfig,
    engagement: group === 'engagement',
    capabilities,
  };
}

export const RULE_REGISTRY: readonly RuleCategory[] = [
  // content
  rule(
    'content_rating',
    'content',
    'Content rating limit',
    'The highest rating the child may watch or play in each rating system (MPAA, TV Parental Guidelines, ESRB, PEGI, Common Sense Media). Titles rated above it are hidden or locked.',
    object({
      max_ratings: object({
        csm: ratingCodes('csm'),
        esrb: ratingCodes('esrb'),
        mpaa: ratingCodes('mpaa'),
        pegi: ratingCodes('pegi'),
        tvpg: ratingCodes('tvpg'),
      }),
    }),
    { max_ratings: { csm: '10+', esrb: 'E10+', mpaa: 'PG', pegi: '7', tvpg: 'TV-PG' } },
    ['content_rating'],
  ),
  rule(
    'content_block_title',
    'content',
    'Blocked titles',
    'Specific movies, shows, games or apps the child may not open, whatever their rating.',
    object({ titles: TITLES }),
    { titles: [] },
    ['content_rating'],
  ),
  rule(
    'content_allow_title',
    'content',
    'Allowed titles',
    'Specific titles the child may open even when they are rated above the limit.',
    object({ titles: TITLES }),
    { titles: [] },
    ['content_rating'],
  ),
  rule(
    'content_allowlist_mode',
    'content',
    'Allowed titles only',
    'When on, the child can open only the titles on the allowed list; everything else is hidden.',
    flags('enabled'),
    { enabled: true },
    ['content_rating'],
  ),
  rule(
    'content_descriptor_block',
    'content',
    'Blocked content descriptors',
    'Blocks titles that carry any of the chosen content descriptors, such as sexual content or drug use, even when their rating is allowed.',
    object({
      descriptors: setOf([
        'violence',
        'blood_and_gore',
        'sexual_content',
        'nudity',
        'strong_language',
        'drugs',
        'alcohol',
        'tobacco',
        'gambling',
        'horror',
        'discrimination',
        'self_harm',
      ]),
    }),
    { descriptors: ['sexual_content', 'nudity', 'drugs', 'gambling', 'self_harm'] },
    ['content_rating'],
  ),
  rule(
    'content_explicit_music_block',
    'content',
    'Explicit music and podcasts',
    'Blocks songs, music videos and podcast episodes marked explicit.',
    flags('block_explicit'),
    { block_explicit: true },
    ['content_rating'],
  ),
  rule(
    'content_restricted_mode',
    'content',
    'Restricted mode for video sites',
    "Turns on the video site's restricted mode (such as YouTube Restricted Mode), which hides user-uploaded videos flagged as mature.",
    flags('enabled'),
    { enabled: true },
    ['content_rating', 'safe_search'],
  ),
  rule(
    'content_kids_profile_only',
    'content',
    'Kids profile lock',
    "Keeps the child on the streaming service's kids profile; switching to another profile needs the parent's PIN.",
    flags('require_pin_to_switch'),
    { require_pin_to_switch: true },
    ['content_rating'],
  ),
  rule(
    'content_gambling_block',
    'content',
    'Gambling content',
    'Blocks real-money gambling and simulated casino games (slots, poker, roulette) in apps, games and on the web.',
    flags('block_real_money', 'block_simulated'),
    { block_real_money: true, block_simulated: true },
    ['content_rating', 'web_filtering', 'app_control'],
  ),

  // time
  rule(
    'time_daily_limit',
    'time',
    'Daily time limit',
    'How many minutes a day the child may use the device in total; at the limit the device locks.',
    object({ daily_minutes: integer(0, 1440) }),
    { daily_minutes: 120 },
    ['time_limit'],
  ),
  rule(
    'time_scheduled_hours',
    'time',
    'Allowed hours',
    'The hours of the day the device may be used, separately for weekdays and weekends; outside them it is locked.',
    object({ schedule: object({ weekday: WINDOW, weekend: WINDOW }) }),
    {
      schedule: {
        weekday: { start: '07:00', end: '21:00' },
        weekend: { start: '08:00', end: '22:00' },
      },
    },
    ['scheduled_hours'],
  ),
  rule(
    'time_per_app_limit',
    'time',
    'Per-app time limits',
    'A daily minute budget for individual apps, identified by bundle ID or package name.',
    object({
      limits: listOf(object({ app_id: text(255), daily_minutes: integer(0, 1440) }), 200),
    }),
    { limits: [] },
    ['time_limit', 'app_control'],
  ),
  rule(
    'time_downtime',
    'time',
    'Downtime',
    'A recurring block of time, such as homework or dinner, when only always-allowed apps and calls work.',
    object({ start: CLOCK_TIME, end: CLOCK_TIME, days: setOf(WEEKDAYS, 1) }),
    { start: '21:00', end: '07:00', days: [...WEEKDAYS] },
    ['scheduled_hours'],
  ),
  rule(
    'time_downtime_exceptions',
    'time',
    'Downtime exceptions',
    'Apps and callers that stay available during downtime and outside allowed hours, such as calls from parents or a school app.',
    object({
      always_allowed_apps: listOf(text(255), 100),
      allow_calls_from: oneOf('none', 'parents', 'contacts', 'everyone'),
    }),
    { always_allowed_apps: [], allow_calls_from: 'parents' },
    ['scheduled_hours', 'app_control'],
  ),
  rule(
    'time_bonus_request',
    'time',
    'Requests for more time',
    'Lets the child ask for extra minutes when a limit is reached; a parent approves or declines each request, up to a daily maximum.',
    object({
      allow_requests: BOOLEAN,
      max_requests_per_day: integer(0, 20),
      max_bonus_minutes_per_day: integer(0, 480),
    }),
    { allow_requests: true, max_requests_per_day: 2, max_bonus_minutes_per_day: 30 },
    ['time_limit'],
  ),
  rule(
    'time_school_hours',
    'time',
    'School-hours mode',
    'During school hours on school days only the listed apps work (for example school and calling apps), and notifications can be silenced.',
    object({
      days: setOf(WEEKDAYS, 1),
      start: CLOCK_TIME,
      end: CLOCK_TIME,
      allowed_apps: listOf(text(255), 100),
      silence_notifications: BOOLEAN,
    }),
    {
      days: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'],
      start: '08:00',
      end: '15:00',
      allowed_apps: [],
      silence_notifications: true,
    },
    ['scheduled_hours', 'app_control', 'notification_control'],
  ),
  rule(
    'time_category_limit',
    'time',
    'App category budgets',
    'A daily minute budget for a whole category of apps, such as games or social media, shared by every app in it.',
    object({
      limits: listOf(
        object({
          category: oneOf(
            'games',
            'social',
            'video',
            'entertainment',
            'creativity',
            'education',
            'productivity',
            'reading',
            'other',
          ),
          daily_minutes: integer(0, 1440),
        }),
        9,
      ),
    }),
    {
      limits: [
        { category: 'games', daily_minutes: 60 },
        { category: 'social', daily_minutes: 30 },
      ],
    },
    ['time_limit', 'app_control'],
  ),
  rule(
    'time_session_limit',
    'time',
    'Session length and breaks',
    'Caps how long one continuous session may last and enforces a break before the next one.',
    object({ max_session_minutes: integer(5, 480), break_minutes: integer(0, 240) }),
    { max_session_minutes: 45, break_minutes: 15 },
    ['time_limit'],
  ),
  rule(
    'time_limit_action',
    'time',
    'What happens at the limit',
    'What the device does when a time limit or allowed-hours window runs out: lock the device, block only the limited apps, or just notify, after optional grace minutes.',
    object({
      action: oneOf('lock_device', 'block_apps', 'notify_only'),
      grace_minutes: integer(0, 30),
    }),
    { action: 'block_apps', grace_minutes: 5 },
    ['time_limit', 'scheduled_hours'],
  ),

  // purchase
  rule(
    'purchase_approval',
    'purchase',
    'Ask to buy',
    "Every purchase and paid download needs a parent's approval first.",
    flags('require_approval'),
    { require_approval: true },
    ['purchase_control'],
  ),
  rule(
    'purchase_spending_cap',
    'purchase',
    'Spending cap',
    'The most the child can spend per day, week or month; the amount is in the minor unit of the currency (cents for USD).',
    object({
      max_amount_minor: integer(0, 10_000_000),
      period: oneOf('day', 'week', 'month'),
      currency: CURRENCY,
    }),
    { max_amount_minor: 2000, period: 'month', currency: 'USD' },
    ['purchase_control'],
  ),
  rule(
    'purchase_block_iap',
    'purchase',
    'Block in-app purchases',
    'Blocks buying anything inside apps and games.',
    flags('block_iap'),
    { block_iap: true },
    ['purchase_control'],
  ),
  rule(
    'purchase_subscription_block',
    'purchase',
    'Block subscriptions',
    'Blocks starting recurring subscriptions, and optionally free trials that turn into paid plans.',
    flags('block_subscriptions', 'block_free_trials'),
    { block_subscriptions: true, block_free_trials: true },
    ['purchase_control'],
  ),
  rule(
    'purchase_virtual_currency_cap',
    'purchase',
    'Virtual currency cap',
    'The most real money that can be turned into in-game currency (coins, gems, V-Bucks, Robux) per month, in the minor unit of the currency.',
    object({ monthly_max_minor: integer(0, 1_000_000), currency: CURRENCY }),
    { monthly_max_minor: 1000, currency: 'USD' },
    ['purchase_control'],
  ),
  rule(
    'purchase_saved_payment_block',
    'purchase',
    'No saved payment methods',
    "No card or wallet can be stored on the child's account, so every purchase needs a payment entered by a parent.",
    flags('block_saved_payment_methods'),
    { block_saved_payment_methods: true },
    ['purchase_control'],
  ),
  rule(
    'purchase_live_gifting_block',
    'purchase',
    'Live-stream gifts and tips',
    'Blocks sending paid gifts, tips or coins to streamers and creators, and receiving them on streams the child hosts.',
    flags('block_sending', 'block_receiving'),
    { block_sending: true, block_receiving: true },
    ['purchase_control', 'social_control'],
  ),

  // social
  rule(
    'social_contacts',
    'social',
    'Approved contacts',
    "Who the child can add as a contact; with approval on, every new contact needs a parent's approval.",
    object({ require_approval: BOOLEAN, approved_contacts: listOf(text(255), 500) }),
    { require_approval: true, approved_contacts: [] },
    ['social_control'],
  ),
  rule(
    'social_chat_control',
    'social',
    'Chat',
    'Who can text-chat with the child in games and apps: friends only, everyone, or no one.',
    object({ mode: oneOf(...AUDIENCE) }),
    { mode: 'friends_only' },
    ['social_control'],
  ),
  rule(
    'social_multiplayer',
    'social',
    'Online multiplayer',
    'Whether the child can play online with others: not at all, with friends only, or with anyone.',
    object({ mode: oneOf(...AUDIENCE) }),
    { mode: 'friends_only' },
    ['social_control'],
  ),
  rule(
    'social_stranger_contact_block',
    'social',
    'Contact from strangers',
    'Blocks messages, friend requests and game invitations from accounts the child is not connected to, optionally letting friends of friends through.',
    flags('block_strangers', 'allow_friends_of_friends'),
    { block_strangers: true, allow_friends_of_friends: false },
    ['social_control'],
  ),
  rule(
    'social_voice_chat',
    'social',
    'Voice chat',
    'Who can talk with the child by voice in games and apps: no one, friends only, or everyone.',
    object({ mode: oneOf(...AUDIENCE) }),
    { mode: 'friends_only' },
    ['social_control'],
  ),
  rule(
    'social_video_call',
    'social',
    'Video calls',
    'Who can video-call the child: no one, approved contacts, or everyone.',
    object({ mode: oneOf(...CONTACT_AUDIENCE) }),
    { mode: 'contacts_only' },
    ['social_control'],
  ),
  rule(
    'social_live_streaming',
    'social',
    'Live streaming',
    'Whether the child can broadcast live video, who can watch, and whether viewers can comment live.',
    object({ broadcast: oneOf(...AUDIENCE), allow_live_comments: BOOLEAN }),
    { broadcast: 'none', allow_live_comments: false },
    ['social_control'],
  ),
  rule(
    'social_mention_control',
    'social',
    'Tags and mentions',
    'Who can tag the child in photos and posts, and who can mention them in comments and stories.',
    object({ tags: oneOf(...AUDIENCE), mentions: oneOf(...AUDIENCE) }),
    { tags: 'friends_only', mentions: 'friends_only' },
    ['social_control'],
  ),
  rule(
    'social_comment_control',
    'social',
    'Comments',
    "Who can comment on the child's posts, and whether offensive comments are hidden automatically.",
    object({ allow_from: oneOf(...AUDIENCE), hide_offensive: BOOLEAN }),
    { allow_from: 'friends_only', hide_offensive: true },
    ['social_control'],
  ),
  rule(
    'social_contact_discovery',
    'social',
    'Being found by others',
    "Whether others can find the child's account by phone number or email, and whether it is suggested to people they do not know.",
    flags('findable_by_phone', 'findable_by_email', 'suggest_to_others'),
    { findable_by_phone: false, findable_by_email: false, suggest_to_others: false },
    ['social_control', 'privacy_control'],
  ),

  // web
  rule(
    'web_safesearch',
    'web',
    'SafeSearch',
    'Forces SafeSearch on Google, Bing and other search engines, so explicit results are filtered out.',
    flags('enabled'),
    { enabled: true },
    ['safe_search'],
  ),
  rule(
    'web_category_block',
    'web',
    'Blocked site categories',
    'Blocks whole categories of websites, such as adult content, gambling or dating.',
    object({
      categories: setOf([
        'adult',
        'gambling',
        'dating',
        'drugs',
        'alcohol_tobacco',
        'weapons',
        'violence',
        'hate',
        'self_harm',
        'piracy',
        'social_media',
        'gaming',
        'video_streaming',
        'chat',
        'proxies_vpn',
        'malware_phishing',
      ]),
    }),
    {
      categories: [
        'adult',
        'gambling',
        'dating',
        'drugs',
        'weapons',
        'hate',
        'self_harm',
        'proxies_vpn',
        'malware_phishing',
      ],
    },
    ['web_filtering'],
  ),
  rule(
    'web_custom_allowlist',
    'web',
    'Always-allowed sites',
    'Sites the child can always open, whatever the filter says; *.example.com also covers every subdomain.',
    object({ domains: DOMAINS }),
    { domains: [] },
    ['custom_allowlist'],
  ),
  rule(
    'web_custom_blocklist',
    'web',
    'Always-blocked sites',
    'Sites the child can never open; *.example.com also covers every subdomain.',
    object({ domains: DOMAINS }),
    { domains: [] },
    ['custom_blocklist'],
  ),
  rule(
    'web_filter_level',
    'web',
    'Web filter level',
    'How strictly websites are filtered: strict blocks anything unsuitable for young children, light blocks only adult and dangerous sites.',
    object({ level: oneOf('strict', 'moderate', 'light') }),
    { level: 'moderate' },
    ['web_filtering'],
  ),
  rule(
    'web_download_block',
    'web',
    'Downloads',
    'Blocks downloading programs and installers from the browser, or every download.',
    object({ block: oneOf('none', 'executables', 'all') }),
    { block: 'executables' },
    ['web_filtering'],
  ),
  rule(
    'web_bypass_block',
    'web',
    'Filter bypass',
    'Blocks the usual ways around the web filter: VPNs, proxy sites, encrypted DNS set in the browser, and private browsing.',
    flags('block_vpn', 'block_proxies', 'block_encrypted_dns', 'block_private_browsing'),
    {
      block_vpn: true,
      block_proxies: true,
      block_encrypted_dns: true,
      block_private_browsing: true,
    },
    ['web_filtering', 'app_control'],
  ),
  rule(
    'web_allowlist_only',
    'web',
    'Allowed sites only',
    'When on, the child can open only the sites on the always-allowed list.',
    flags('enabled'),
    { enabled: true },
    ['custom_allowlist', 'web_filtering'],
  ),

  // privacy
  rule(
    'privacy_location',
    'privacy',
    'Location sharing',
    'Who can see where the child is (no one, parents, family, or also friends), and whether apps get the precise or only the approximate location.',
    object({ share_with: oneOf('none', 'parents', 'family', 'friends'), precise: BOOLEAN }),
    { share_with: 'parents', precise: false },
    ['location_tracking', 'privacy_control'],
  ),
  rule(
    'privacy_profile_visibility',
    'privacy',
    'Profile visibility',
    "Who can see the child's profile and posts: only approved followers, friends, or everyone.",
    object({ visibility: oneOf('private', 'friends', 'public') }),
    { visibility: 'private' },
    ['privacy_control'],
  ),
  rule(
    'privacy_data_sharing',
    'privacy',
    'Data sharing',
    "Whether apps may share the child's data with third parties, and whether they may collect usage analytics.",
    flags('share_with_third_parties', 'allow_analytics'),
    { share_with_third_parties: false, allow_analytics: false },
    ['privacy_control', 'ad_data_control'],
  ),
  rule(
    'privacy_account_creation',
    'privacy',
    'New accounts',
    "The child cannot create new accounts or sign up for services without a parent's approval.",
    flags('require_approval'),
    { require_approval: true },
    ['privacy_control', 'age_verification'],
  ),
  rule(
    'privacy_location_history',
    'privacy',
    'Location history',
    "Whether the child's past locations are stored at all, and for how many days.",
    object({ keep_history: BOOLEAN, retention_days: integer(0, 365) }),
    { keep_history: false, retention_days: 0 },
    ['location_tracking', 'privacy_control'],
  ),
  rule(
    'privacy_biometric_data',
    'privacy',
    'Biometric data',
    'Whether apps may collect face geometry, voiceprints or fingerprints from the child (unlocking the device itself is not affected).',
    flags('allow_face_data', 'allow_voiceprints', 'allow_fingerprints'),
    { allow_face_data: false, allow_voiceprints: false, allow_fingerprints: false },
    ['privacy_control'],
  ),
  rule(
    'privacy_app_permissions',
    'privacy',
    'Camera, microphone, photos and contacts',
    'Whether apps may use the camera, microphone, photo library and contacts: allowed, only after asking a parent, or never.',
    object({
      camera: oneOf('allow', 'ask_parent', 'deny'),
      microphone: oneOf('allow', 'ask_parent', 'deny'),
      photos: oneOf('allow', 'ask_parent', 'deny'),
      contacts: oneOf('allow', 'ask_parent', 'deny'),
    }),
    {
      camera: 'ask_parent',
      microphone: 'ask_parent',
      photos: 'ask_parent',
      contacts: 'ask_parent',
    },
    ['privacy_control', 'app_control'],
  ),
  rule(
    'privacy_search_indexing',
    'privacy',
    'Search engine indexing',
    "Keeps the child's profile and posts out of search engines and public profile directories.",
    flags('allow_indexing'),
    { allow_indexing: false },
    ['privacy_control'],
  ),
  rule(
    'privacy_voice_recordings',
    'privacy',
    'Voice assistant recordings',
    "Whether voice assistants may keep recordings of the child's requests, and for how many days.",
    object({ keep_recordings: BOOLEAN, retention_days: integer(0, 365) }),
    { keep_recordings: false, retention_days: 0 },
    ['privacy_control'],
  ),

  // monitoring
  rule(
    'monitoring_activity',
    'monitoring',
    'Activity reports',
    'Records which apps and sites the child uses and for how long, so the parent can see it.',
    flags('enabled'),
    { enabled: true },
    ['activity_monitoring'],
  ),
  rule(
    'monitoring_alerts',
    'monitoring',
    'Parent alerts',
    'Which events send the parent an alert, such as a blocked site or a purchase attempt, and by which channels.',
    object({
      events: setOf([
        'blocked_site',
        'time_limit_reached',
        'new_app',
        'purchase_attempt',
        'new_contact',
        'location_change',
        'flagged_content',
      ]),
      channels: setOf(ALERT_CHANNELS, 1),
    }),
    {
      events: ['blocked_site', 'new_app', 'purchase_attempt', 'new_contact', 'flagged_content'],
      channels: ['push'],
    },
    ['activity_monitoring'],
  ),
  rule(
    'monitoring_search_history',
    'monitoring',
    'Search history',
    'Lets the parent see what the child searched for on the web and in apps, kept for a set number of days.',
    object({ enabled: BOOLEAN, retention_days: integer(1, 365) }),
    { enabled: true, retention_days: 30 },
    ['activity_monitoring'],
  ),
  rule(
    'monitoring_keyword_alerts',
    'monitoring',
    'Risk alerts',
    "Alerts the parent when the child's messages, searches or posts show signs of risk such as self-harm, bullying or grooming; the parent sees a summary, not every message.",
    object({
      categories: setOf([
        'self_harm',
        'bullying',
        'grooming',
        'sexual_content',
        'drugs',
        'violence',
        'extremism',
        'eating_disorders',
      ]),
      sensitivity: oneOf('low', 'medium', 'high'),
    }),
    {
      categories: ['self_harm', 'bullying', 'grooming', 'sexual_content', 'eating_disorders'],
      sensitivity: 'medium',
    },
    ['activity_monitoring'],
  ),
  rule(
    'monitoring_geofence_alerts',
    'monitoring',
    'Place alerts',
    'Alerts the parent when the child arrives at or leaves chosen places, such as home or school.',
    object({
      places: listOf(
        object({
          name: text(64),
          latitude: decimal(-90, 90),
          longitude: decimal(-180, 180),
          radius_meters: integer(50, 5000),
        }),
        20,
      ),
      notify_on: oneOf('arrive', 'leave', 'both'),
    }),
    { places: [], notify_on: 'both' },
    ['location_tracking', 'activity_monitoring'],
  ),

  // algorithmic_safety
  rule(
    'algo_feed_control',
    'algorithmic_safety',
    'Feed ordering',
    'How feeds are ordered: newest first, only accounts the child follows, or picked by the recommendation algorithm.',
    object({ mode: oneOf('chronological', 'following_only', 'algorithmic') }),
    { mode: 'chronological' },
    ['algorithmic_safety'],
  ),
  rule(
    'addictive_design_control',
    'algorithmic_safety',
    'Addictive design features',
    'Turns off the design features built to keep the child scrolling: infinite scroll, autoplay, streaks, like counts and daily rewards.',
    flags(
      'disable_infinite_scroll',
      'disable_autoplay',
      'disable_streaks',
      'disable_like_counts',
      'disable_daily_rewards',
    ),
    {
      disable_infinite_scroll: true,
      disable_autoplay: true,
      disable_streaks: true,
      disable_like_counts: true,
      disable_daily_rewards: true,
    },
    ['algorithmic_safety'],
  ),
  rule(
    'algo_sensitive_content_filter',
    'algorithmic_safety',
    'Sensitive content in recommendations',
    'How much sensitive but allowed content (dieting, cosmetic procedures, graphic news) recommendations may show.',
    object({ level: oneOf('strictest', 'reduced', 'standard') }),
    { level: 'strictest' },
    ['algorithmic_safety'],
  ),
  rule(
    'algo_profiling_opt_out',
    'algorithmic_safety',
    'Recommendations without profiling',
    "Recommendations and search results are not based on a profile of the child's behaviour.",
    flags('allow_profiling'),
    { allow_profiling: false },
    ['algorithmic_safety'],
  ),
  rule(
    'algo_topic_block',
    'algorithmic_safety',
    'Blocked recommendation topics',
    'Topics and keywords that recommendation feeds must never push to the child, such as extreme dieting or self-harm.',
    object({
      topics: setOf([
        'eating_disorders',
        'extreme_dieting',
        'self_harm',
        'suicide',
        'cosmetic_procedures',
        'gambling',
        'substances',
        'violence',
        'extremism',
        'misogyny',
        'get_rich_quick',
      ]),
      keywords: listOf(text(64), 100),
    }),
    {
      topics: ['eating_disorders', 'extreme_dieting', 'self_harm', 'suicide', 'extremism'],
      keywords: [],
    },
    ['algorithmic_safety'],
  ),
  rule(
    'algo_repetition_limit',
    'algorithmic_safety',
    'Rabbit-hole limit',
    'Stops feeds from recommending the same kind of content over and over, such as body-image videos, beyond a number in a row.',
    object({ max_similar_in_a_row: integer(1, 50) }),
    { max_similar_in_a_row: 3 },
    ['algorithmic_safety'],
  ),

  // notifications
  rule(
    'notification_curfew',
    'notifications',
    'Notification curfew',
    'No notifications reach the child between the start and end times (a window may cross midnight).',
    object({ start: CLOCK_TIME, end: CLOCK_TIME }),
    { start: '20:00', end: '07:00' },
    ['notification_control'],
  ),
  rule(
    'usage_timer_notification',
    'notifications',
    'Usage reminders',
    'Reminds the child how long they have been using the device, every set number of minutes.',
    object({ interval_minutes: integer(1, 240) }),
    { interval_minutes: 15 },
    ['notification_control', 'time_limit'],
  ),
  rule(
    'notification_time_warning',
    'notifications',
    'Time-running-out warning',
    'Warns the child a few minutes before a time limit or allowed-hours window ends.',
    object({ minutes_before: integer(1, 60) }),
    { minutes_before: 5 },
    ['notification_control', 'time_limit'],
  ),
  rule(
    'notification_marketing_block',
    'notifications',
    'Promotional notifications',
    'Blocks marketing notifications such as sales, special offers and new items in the shop.',
    flags('block_promotional'),
    { block_promotional: true },
    ['notification_control'],
  ),
  rule(
    'notification_digest',
    'notifications',
    'Notification digest',
    'Holds non-urgent notifications and delivers them together at set times of day instead of one by one.',
    object({ delivery_times: listOf(CLOCK_TIME, 6, 1) }),
    { delivery_times: ['16:00', '19:00'] },
    ['notification_control'],
  ),

  // advertising_and_data
  rule(
    'targeted_ad_block',
    'advertising_and_data',
    'No targeted ads',
    "No ads based on the child's behaviour, interests or profile; only contextual ads, if any.",
    flags('block_targeted_ads'),
    { block_targeted_ads: true },
    ['ad_data_control'],
  ),
  rule(
    'dm_restriction',
    'advertising_and_data',
    'Direct messages',
    'Who can send the child direct messages: no one, existing contacts, or everyone.',
    object({ mode: oneOf(...CONTACT_AUDIENCE) }),
    { mode: 'contacts_only' },
    ['social_control'],
  ),
  rule(
    'age_gate',
    'advertising_and_data',
    'Age gate',
    'Blocks services and features meant for users older than the minimum age.',
    object({ enabled: BOOLEAN, min_age: integer(0, 21) }, ['min_age']),
    { enabled: true, min_age: 13 },
    ['age_verification'],
  ),
  rule(
    'geolocation_opt_in',
    'advertising_and_data',
    'Location collection',
    "Whether apps and ad networks may collect the child's location at all; off means no location is collected.",
    flags('geolocation_allowed'),
    { geolocation_allowed: false },
    ['location_tracking', 'privacy_control'],
  ),
  rule(
    'data_deletion_request',
    'advertising_and_data',
    'Data deletion',
    'Asks connected services to delete the personal data they hold about the child (a COPPA and GDPR right).',
    flags('enabled'),
    { enabled: true },
    ['ad_data_control', 'privacy_control'],
  ),
  rule(
    'sponsored_content_label',
    'advertising_and_data',
    'Sponsored posts',
    'Paid promotions, influencer posts and product placements are clearly labelled as ads, or hidden.',
    object({ mode: oneOf('label', 'hide') }),
    { mode: 'label' },
    ['ad_data_control'],
  ),
  rule(
    'data_retention_limit',
    'advertising_and_data',
    'Data retention limit',
    "Services may keep the child's personal data for at most this many days.",
    object({ max_days: integer(1, 3650) }),
    { max_days: 365 },
    ['ad_data_control', 'privacy_control'],
  ),
  rule(
    'ad_category_block',
    'advertising_and_data',
    'Blocked ad categories',
    'Ads for products unsuitable for children, such as alcohol, gambling, dating or weight loss, are never shown.',
    object({
      categories: setOf([
        'alcohol',
        'tobacco_vaping',
        'gambling',
        'dating',
        'weight_loss',
        'cosmetic_procedures',
        'cannabis',
        'weapons',
        'financial_speculation',
        'adult',
      ]),
    }),
    {
      categories: [
        'alcohol',
        'tobacco_vaping',
        'gambling',
        'dating',
        'weight_loss',
        'cosmetic_procedures',
        'cannabis',
        'weapons',
        'financial_speculation',
        'adult',
      ],
    },
    ['ad_data_control'],
  ),
  rule(
    'data_access_request',
    'advertising_and_data',
    'Parent data access',
    'Lets the parent ask connected services for a copy of the data they hold about the child (a COPPA and GDPR right).',
    flags('enabled'),
    { enabled: true },
    ['ad_data_control', 'privacy_control'],
  ),
  rule(
    'third_party_tracking_block',
    'advertising_and_data',
    'Tracker blocking',
    'Blocks third-party trackers and analytics SDKs that follow the child across apps and sites.',
    flags('block_trackers'),
    { block_trackers: true },
    ['ad_data_control', 'web_filtering'],
  ),

  // compliance
  rule(
    'csam_reporting',
    'compliance',
    'CSAM detection and reporting',
    "Known child sexual abuse material is detected by hash matching and reported to the hotline for the child's country.",
    object({
      hash_matching: BOOLEAN,
      report_to: oneOf('ncmec', 'iwf', 'cybertip_ca', 'esafety_au', 'inhope'),
    }),
    { hash_matching: true, report_to: 'ncmec' },
    ['compliance_reporting'],
  ),
  rule(
    'library_filter_compliance',
    'compliance',
    'CIPA filtering',
    "Applies the filtering the US Children's Internet Protection Act requires of schools and libraries: obscene images, child abuse imagery and content harmful to minors.",
    flags('enabled'),
    { enabled: true },
    ['web_filtering', 'compliance_reporting'],
  ),
  rule(
    'ai_minor_interaction',
    'compliance',
    'AI services treat the child as a minor',
    'AI assistants and chatbots are told the user is a minor and must apply their minor-safety policy.',
    flags('minor_mode'),
    { minor_mode: true },
    ['compliance_reporting', 'age_verification'],
  ),
  rule(
    'social_media_min_age',
    'compliance',
    'Social media minimum age',
    'Social media accounts are blocked below this age, set by law or by the parent (13 under most terms of service, 16 in Australia).',
    object({ min_age: integer(13, 18) }),
    { min_age: 13 },
    ['age_verification', 'social_control', 'app_control'],
  ),
  rule(
    'image_rights_minor',
    'compliance',
    "Child's image rights",
    "Photos and videos of the child may not be published or monetised without both parents' consent, as France's 2024 law on children's image rights requires.",
    flags('require_consent_to_publish', 'allow_monetisation'),
    { require_consent_to_publish: true, allow_monetisation: false },
    ['privacy_control', 'compliance_reporting'],
  ),
  rule(
    'uk_aadc_defaults',
    'compliance',
    'UK Age Appropriate Design Code defaults',
    "Applies the Code's default settings for children: high privacy, geolocation off, profiling off and no nudge techniques.",
    flags('high_privacy_default', 'geolocation_off', 'profiling_off', 'nudge_techniques_off'),
    {
      high_privacy_default: true,
      geolocation_off: true,
      profiling_off: true,
      nudge_techniques_off: true,
    },
    ['privacy_control', 'compliance_reporting'],
  ),
  rule(
    'coppa_verifiable_consent',
    'compliance',
    'COPPA verifiable parental consent',
    'Services must get verifiable parental consent before collecting personal data from a child; this sets the FTC-recognised method and the age it applies under (13 in COPPA).',
    object({
      method: oneOf(
        'signed_form',
        'payment_card',
        'toll_free_call',
        'video_call',
        'government_id',
        'knowledge_based_questions',
        'face_match',
      ),
      applies_under_age: integer(13, 18),
    }),
    { method: 'payment_card', applies_under_age: 13 },
    ['age_verification', 'compliance_reporting'],
  ),
  rule(
    'ca_aadc_tracking_signal',
    'compliance',
    'California AADC monitoring signal',
    'Shows the child an obvious signal while a parent monitors their activity or tracks their location, as the California Age-Appropriate Design Code requires.',
    flags('signal_monitoring', 'signal_location'),
    { signal_monitoring: true, signal_location: true },
    ['compliance_reporting', 'activity_monitoring', 'location_tracking'],
  ),
  rule(
    'eu_dsa_minor_protections',
    'compliance',
    'EU DSA protections for minors',
    "Applies the Digital Services Act's protections for minors: no ads based on profiling, a feed option not based on profiling, and private accounts by default.",
    flags('no_profiling_ads', 'non_profiling_feed', 'private_by_default'),
    { no_profiling_ads: true, non_profiling_feed: true, private_by_default: true },
    ['ad_data_control', 'algorithmic_safety', 'compliance_reporting'],
  ),
  rule(
    'ncii_takedown',
    'compliance',
    'Intimate image takedown',
    'Intimate images of the child shared without consent are hash-matched and removed within the set hours (the US TAKE IT DOWN Act allows at most 48).',
    object({ hash_matching: BOOLEAN, removal_hours: integer(1, 48) }),
    { hash_matching: true, removal_hours: 48 },
    ['compliance_reporting'],
  ),
  rule(
    'uk_osa_age_assurance',
    'compliance',
    'UK Online Safety Act age checks',
    'Services with pornography or other content harmful to children must check age with a highly effective method before the child can reach it.',
    object({
      method: oneOf(
        'facial_age_estimation',
        'photo_id_matching',
        'open_banking',
        'credit_card',
        'mobile_operator',
        'digital_identity',
        'email_age_estimation',
      ),
      min_age: integer(13, 18),
    }),
    { method: 'facial_age_estimation', min_age: 18 },
    ['age_verification', 'compliance_reporting'],
  ),

  // legislation
  rule(
    'parental_consent_gate',
    'legislation',
    'Parental consent gate',
    "The listed features need a parent's verified consent before a minor under the set age can use them, as state minor-protection laws require.",
    object({
      consent_for: setOf([
        'account_creation',
        'data_collection',
        'purchases',
        'messaging',
        'public_profile',
        'algorithmic_feed',
      ]),
      applies_under_age: integer(13, 18),
    }),
    { consent_for: ['account_creation', 'data_collection'], applies_under_age: 18 },
    ['age_verification', 'compliance_reporting'],
  ),
  rule(
    'parental_event_notification',
    'legislation',
    'Parent notifications',
    "The parent is told when key things happen on the child's account, such as a privacy setting changing or a report being filed.",
    object({
      events: setOf([
        'account_created',
        'privacy_setting_changed',
        'contact_added',
        'report_filed',
        'age_changed',
        'consent_requested',
      ]),
      channels: setOf(ALERT_CHANNELS, 1),
    }),
    {
      events: ['account_created', 'privacy_setting_changed', 'report_filed', 'consent_requested'],
      channels: ['email'],
    },
    ['notification_control', 'compliance_reporting'],
  ),
  rule(
    'screen_time_report',
    'legislation',
    'Screen-time report',
    'A regular report to the parent of how long the child spent on each app and service.',
    object({ frequency: oneOf('daily', 'weekly', 'monthly'), include_per_app: BOOLEAN }),
    { frequency: 'weekly', include_per_app: true },
    ['activity_monitoring'],
  ),
  rule(
    'commercial_data_ban',
    'legislation',
    'No commercial use of data',
    "The child's data may not be sold or shared for advertising, only used to provide the service.",
    flags('ban_sale', 'ban_sharing_for_ads'),
    { ban_sale: true, ban_sharing_for_ads: true },
    ['ad_data_control', 'compliance_reporting'],
  ),
  rule(
    'algorithmic_audit',
    'legislation',
    'Algorithm audit',
    'Services report how their recommendation systems affect minors, for an independent audit at the set frequency.',
    object({ report_frequency: oneOf('quarterly', 'semiannual', 'annual') }),
    { report_frequency: 'annual' },
    ['algorithmic_safety', 'compliance_reporting'],
  ),
  rule(
    'addictive_feed_consent',
    'legislation',
    'Consent for addictive feeds',
    "An algorithmic feed for a minor needs verified parental consent, as New York's SAFE for Kids Act requires; without it the feed is chronological.",
    flags('require_consent'),
    { require_consent: true },
    ['algorithmic_safety', 'age_verification'],
  ),
  rule(
    'app_store_age_verification',
    'legislation',
    'App store age checks',
    "The app store verifies the child's age and links the account to a parent who consents to downloads, as Utah's and Texas's app store accountability laws require.",
    flags('verify_age', 'consent_per_download'),
    { verify_age: true, consent_per_download: true },
    ['age_verification', 'app_control', 'purchase_control'],
  ),
  rule(
    'mental_health_warning_label',
    'legislation',
    'Mental-health warning label',
    'Social media shows the child a mental-health warning label when opened, as state warning-label laws such as Minnesota’s require.',
    object({ frequency: oneOf('every_session', 'daily', 'weekly') }),
    { frequency: 'every_session' },
    ['compliance_reporting', 'notification_control'],
  ),

  // engagement
  rule(
    'infinite_scroll_block',
    'engagement',
    'No infinite scroll',
    'Feeds stop at the end of a page instead of loading forever; the child has to choose to load more.',
    flags('enabled'),
    { enabled: true },
    ['algorithmic_safety'],
  ),
  rule(
    'addictive_pattern_block',
    'engagement',
    'Addictive patterns',
    "Blocks any chosen set of attention-capturing patterns (infinite scroll, autoplay, streaks, loot boxes and more) across the child's apps in one rule.",
    object({
      patterns: setOf([
        'infinite_scroll',
        'autoplay',
        'streaks',
        'like_counts',
        'daily_rewards',
        'loot_boxes',
        'variable_rewards',
        'reengagement_notifications',
        'urgency_timers',
      ]),
    }),
    {
      patterns: [
        'infinite_scroll',
        'autoplay',
        'streaks',
        'like_counts',
        'daily_rewards',
        'loot_boxes',
        'variable_rewards',
        'reengagement_notifications',
        'urgency_timers',
      ],
    },
    ['algorithmic_safety'],
  ),
  rule(
    'autoplay_block',
    'engagement',
    'No autoplay',
    'The next video or episode does not start by itself, and previews do not play while browsing.',
    flags('block_autoplay', 'block_previews'),
    { block_autoplay: true, block_previews: true },
    ['algorithmic_safety'],
  ),
  rule(
    'streak_block',
    'engagement',
    'No streaks',
    'Hides streak counters and "don\'t lose your streak" reminders.',
    flags('enabled'),
    { enabled: true },
    ['algorithmic_safety'],
  ),
  rule(
    'like_count_hide',
    'engagement',
    'Hidden like counts',
    "Hides like, view and follower counts on the child's own posts and on other people's.",
    flags('hide_on_own_posts', 'hide_on_others_posts'),
    { hide_on_own_posts: true, hide_on_others_posts: true },
    ['algorithmic_safety'],
  ),
  rule(
    'loot_box_block',
    'engagement',
    'No loot boxes',
    'Blocks random-reward items in games (loot boxes, gacha pulls, card packs), whether bought or earned.',
    flags('block_paid', 'block_free'),
    { block_paid: true, block_free: false },
    ['purchase_control', 'algorithmic_safety'],
  ),
  rule(
    'variable_reward_block',
    'engagement',
    'No variable rewards',
    'Turns off unpredictable rewards meant to keep the child checking back, such as mystery prizes and spin-the-wheel bonuses.',
    flags('enabled'),
    { enabled: true },
    ['algorithmic_safety'],
  ),
  rule(
    'daily_reward_block',
    'engagement',
    'No daily login rewards',
    'Turns off rewards for logging in every day, login calendars and "come back tomorrow" bonuses.',
    flags('enabled'),
    { enabled: true },
    ['algorithmic_safety'],
  ),
  rule(
    'reengagement_notification_block',
    'engagement',
    'No come-back notifications',
    'Blocks notifications meant to pull the child back in, such as "your friends posted" or "we miss you".',
    flags('enabled'),
    { enabled: true },
    ['notification_control', 'algorithmic_safety'],
  ),
  rule(
    'urgency_timer_block',
    'engagement',
    'No countdown pressure',
    'Hides countdown timers and limited-time offers that pressure the child to act or buy right now.',
    flags('enabled'),
    { enabled: true },
    ['algorithmic_safety', 'purchase_control'],
  ),

  // ai_safety
  rule(
    'ai_companion_block',
    'ai_safety',
    'AI companions',
    'Blocks AI companion and character chat apps, or only their romantic and sexual role-play.',
    object({ mode: oneOf('blocked', 'no_romantic_roleplay', 'allowed') }),
    { mode: 'blocked' },
    ['app_control', 'web_filtering'],
  ),
  rule(
    'ai_chatbot_disclosure',
    'ai_safety',
    'AI disclosure reminders',
    "Chatbots must say they are not human and remind the child at set intervals to take a break (California's SB 243 requires at least every three hours).",
    object({ disclose_not_human: BOOLEAN, reminder_interval_minutes: integer(15, 180) }),
    { disclose_not_human: true, reminder_interval_minutes: 60 },
    ['compliance_reporting', 'notification_control'],
  ),
  rule(
    'ai_self_harm_protocol',
    'ai_safety',
    'AI crisis response',
    'When a chat with an AI shows signs of self-harm or suicide, the AI shows crisis resources and can alert the parent.',
    flags('show_crisis_resources', 'notify_parent'),
    { show_crisis_resources: true, notify_parent: true },
    ['compliance_reporting', 'activity_monitoring'],
  ),
  rule(
    'ai_nudify_block',
    'ai_safety',
    'Nudify and deepfake tools',
    'Blocks apps and sites that generate nude or sexual images of real people.',
    flags('enabled'),
    { enabled: true },
    ['web_filtering', 'app_control'],
  ),
  rule(
    'ai_conversation_review',
    'ai_safety',
    'AI chat review',
    "Lets the parent review the child's AI chats (nothing, topics only, or full text), kept for a set number of days.",
    object({ parent_access: oneOf('none', 'topics', 'full'), retention_days: integer(0, 365) }),
    { parent_access: 'topics', retention_days: 30 },
    ['activity_monitoring'],
  ),
  rule(
    'ai_training_opt_out',
    'ai_safety',
    'No AI training on child data',
    "The child's chats, posts, voice and images may not be used to train AI models.",
    flags('allow_training'),
    { allow_training: false },
    ['ad_data_control', 'privacy_control'],
  ),

  // apps
  rule(
    'app_install_approval',
    'apps',
    'App installs',
    "Whether the child can install apps freely, only with a parent's approval of each, or not at all.",
    object({ mode: oneOf(...GATE) }),
    { mode: 'approval' },
    ['app_control'],
  ),
  rule(
    'app_age_rating_limit',
    'apps',
    'App age rating',
    'Hides and blocks apps whose app store age rating is above this age.',
    object({ max_age: integer(0, 18) }),
    { max_age: 12 },
    ['app_control', 'content_rating'],
  ),
  rule(
    'app_block_list',
    'apps',
    'Blocked apps',
    'Specific apps, by bundle ID or package name, that cannot be installed or opened.',
    object({ apps: APP_IDS }),
    { apps: [] },
    ['app_control'],
  ),
  rule(
    'app_sideload_block',
    'apps',
    'Apps from unknown sources',
    'Blocks installing apps from outside the official store (side-loading, unknown sources, developer mode).',
    flags('enabled'),
    { enabled: true },
    ['app_control'],
  ),
  rule(
    'app_tamper_protection',
    'apps',
    'Tamper protection',
    'Stops the child from removing parental controls: uninstalling the control app, changing protected settings or resetting the device.',
    flags('block_uninstall', 'block_settings_changes', 'block_factory_reset'),
    { block_uninstall: true, block_settings_changes: true, block_factory_reset: true },
    ['app_control'],
  ),

  // media
  rule(
    'media_sharing_control',
    'media',
    'Photo and video sharing',
    'Who the child can send photos and videos to, and who can send them to the child.',
    object({ send_to: oneOf(...CONTACT_AUDIENCE), receive_from: oneOf(...CONTACT_AUDIENCE) }),
    { send_to: 'contacts_only', receive_from: 'contacts_only' },
    ['social_control'],
  ),
  rule(
    'media_screenshot_block',
    'media',
    'Screenshots and screen recording',
    "Blocks taking screenshots or recording the screen on the child's device.",
    flags('block_screenshots', 'block_screen_recording'),
    { block_screenshots: false, block_screen_recording: true },
    ['app_control', 'privacy_control'],
  ),
  rule(
    'media_sensitive_content_blur',
    'media',
    'Nudity warnings',
    'Blurs nude images and videos the child receives or is about to send, with a warning and a way to get help, and can tell the parent.',
    flags('blur_received', 'blur_sent', 'notify_parent'),
    { blur_received: true, blur_sent: true, notify_parent: false },
    ['social_control', 'privacy_control'],
  ),
  rule(
    'media_upload_approval',
    'media',
    'Public uploads',
    "Whether the child can post photos and videos publicly: not at all, only with a parent's approval of each, or freely.",
    object({ mode: oneOf(...GATE) }),
    { mode: 'approval' },
    ['social_control', 'privacy_control'],
  ),
];

const BY_CATEGORY = new Map(RULE_REGISTRY.map((entry) => [entry.category, entry]));

export function findRuleCategory(category: string): RuleCategory | undefined {
  return BY_CATEGORY.get(category);
}
