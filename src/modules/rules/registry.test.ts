import { Ajv, type ValidateFunction } from 'ajv';
import { describe, expect, it } from 'vitest';
import { CAPABILITIES } from '../platforms/catalog.js';
import { findRuleCategory, RULE_REGISTRY, type RuleGroup } from './registry.js';

const ajv = new Ajv({ strict: false, allErrors: true });
const validators = new Map<string, ValidateFunction>();

function validatorFor(category: string): ValidateFunction {
  const cached = validators.get(category);
  if (cached) {
    return cached;
  }
  const entry = findRuleCategory(category);
  if (!entry) {
    throw new Error(`unregistered category ${category}`);
  }
  const validate = ajv.compile(entry.config_schema);
  validators.set(category, validate);
  return validate;
}

function accepts(category: string, config: unknown): boolean {
  return validatorFor(category)(config);
}

// DOMAIN.md "Known rule categories (start of the 123)".
const KNOWN: Record<string, RuleGroup> = {
  content_rating: 'content',
  content_block_title: 'content',
  content_allow_title: 'content',
  content_allowlist_mode: 'content',
  content_descriptor_block: 'content',
  time_daily_limit: 'time',
  time_scheduled_hours: 'time',
  time_per_app_limit: 'time',
  time_downtime: 'time',
  purchase_approval: 'purchase',
  purchase_spending_cap: 'purchase',
  purchase_block_iap: 'purchase',
  social_contacts: 'social',
  social_chat_control: 'social',
  social_multiplayer: 'social',
  web_safesearch: 'web',
  web_category_block: 'web',
  web_custom_allowlist: 'web',
  web_custom_blocklist: 'web',
  web_filter_level: 'web',
  privacy_location: 'privacy',
  privacy_profile_visibility: 'privacy',
  privacy_data_sharing: 'privacy',
  privacy_account_creation: 'privacy',
  monitoring_activity: 'monitoring',
  monitoring_alerts: 'monitoring',
  algo_feed_control: 'algorithmic_safety',
  addictive_design_control: 'algorithmic_safety',
  notification_curfew: 'notifications',
  usage_timer_notification: 'notifications',
  targeted_ad_block: 'advertising_and_data',
  dm_restriction: 'advertising_and_data',
  age_gate: 'advertising_and_data',
  data_deletion_request: 'advertising_and_data',
  geolocation_opt_in: 'advertising_and_data',
  csam_reporting: 'compliance',
  library_filter_compliance: 'compliance',
  ai_minor_interaction: 'compliance',
  social_media_min_age: 'compliance',
  image_rights_minor: 'compliance',
  parental_consent_gate: 'legislation',
  parental_event_notification: 'legislation',
  screen_time_report: 'legislation',
  commercial_data_ban: 'legislation',
  algorithmic_audit: 'legislation',
  infinite_scroll_block: 'engagement',
  addictive_pattern_block: 'engagement',
};

type QuickSetup = Record<string, Record<string, unknown>>;

// DOMAIN.md "The 20 quick-setup rules and their configuration", written out per age.
const AT_EVERY_AGE: QuickSetup = {
  web_safesearch: { enabled: true },
  monitoring_activity: { enabled: true },
  privacy_profile_visibility: { visibility: 'private' },
  algo_feed_control: { mode: 'chronological' },
  targeted_ad_block: { block_targeted_ads: true },
  geolocation_opt_in: { geolocation_allowed: false },
  data_deletion_request: { enabled: true },
};

const UNDER_13: QuickSetup = {
  purchase_approval: { require_approval: true },
  purchase_block_iap: { block_iap: true },
  social_chat_control: { mode: 'friends_only' },
  privacy_account_creation: { require_approval: true },
  age_gate: { enabled: true, min_age: 13 },
  dm_restriction: { mode: 'none' },
  addictive_design_control: {
    disable_infinite_scroll: true,
    disable_autoplay: true,
    disable_streaks: true,
    disable_like_counts: true,
    disable_daily_rewards: true,
  },
  notification_curfew: { start: '20:00', end: '07:00' },
};

const QUICK_SETUP_BY_AGE: Record<number, QuickSetup> = {
  5: {
    ...AT_EVERY_AGE,
    ...UNDER_13,
    content_rating: { max_ratings: { mpaa: 'G', tvpg: 'TV-Y', esrb: 'E', pegi: '3', csm: '5+' } },
    time_daily_limit: { daily_minutes: 60 },
    time_scheduled_hours: {
      schedule: {
        weekday: { start: '07:00', end: '19:00' },
        weekend: { start: '08:00', end: '20:00' },
      },
    },
    web_filter_level: { level: 'strict' },
    usage_timer_notification: { interval_minutes: 15 },
  },
  8: {
    ...AT_EVERY_AGE,
    ...UNDER_13,
    content_rating: { max_ratings: { mpaa: 'PG', tvpg: 'TV-Y7', esrb: 'E', pegi: '7', csm: '7+' } },
    time_daily_limit: { daily_minutes: 90 },
    time_scheduled_hours: {
      schedule: {
        weekday: { start: '07:00', end: '20:00' },
        weekend: { start: '08:00', end: '21:00' },
      },
    },
    web_filter_level: { level: 'strict' },
    usage_timer_notification: { interval_minutes: 15 },
  },
  11: {
    ...AT_EVERY_AGE,
    ...UNDER_13,
    content_rating: {
      max_ratings: { mpaa: 'PG', tvpg: 'TV-PG', esrb: 'E10+', pegi: '7', csm: '10+' },
    },
    time_daily_limit: { daily_minutes: 120 },
    time_scheduled_hours: {
      schedule: {
        weekday: { start: '07:00', end: '21:00' },
        weekend: { start: '08:00', end: '22:00' },
      },
    },
    web_filter_level: { level: 'moderate' },
    usage_timer_notification: { interval_minutes: 15 },
  },
  14: {
    ...AT_EVERY_AGE,
    content_rating: {
      max_ratings: { mpaa: 'PG-13', tvpg: 'TV-14', esrb: 'T', pegi: '12', csm: '13+' },
    },
    time_daily_limit: { daily_minutes: 180 },
    time_scheduled_hours: {
      schedule: {
        weekday: { start: '07:00', end: '22:00' },
        weekend: { start: '08:00', end: '23:00' },
      },
    },
    web_filter_level: { level: 'light' },
    usage_timer_notification: { interval_minutes: 30 },
    purchase_approval: { require_approval: true },
    purchase_block_iap: { block_iap: false },
    social_chat_control: { mode: 'everyone' },
    privacy_account_creation: { require_approval: false },
    age_gate: { enabled: false },
    dm_restriction: { mode: 'contacts_only' },
    addictive_design_control: {
      disable_infinite_scroll: true,
      disable_autoplay: true,
      disable_streaks: false,
      disable_like_counts: false,
      disable_daily_rewards: false,
    },
    notification_curfew: { start: '22:00', end: '06:00' },
  },
  17: {
    ...AT_EVERY_AGE,
    content_rating: {
      max_ratings: { mpaa: 'R', tvpg: 'TV-MA', esrb: 'M', pegi: '16', csm: '17+' },
    },
    time_daily_limit: { daily_minutes: 240 },
    time_scheduled_hours: {
      schedule: {
        weekday: { start: '07:00', end: '23:00' },
        weekend: { start: '08:00', end: '24:00' },
      },
    },
    web_filter_level: { level: 'light' },
    usage_timer_notification: { interval_minutes: 60 },
    purchase_approval: { require_approval: true },
    purchase_block_iap: { block_iap: false },
    social_chat_control: { mode: 'everyone' },
    privacy_account_creation: { require_approval: false },
    age_gate: { enabled: false },
    dm_restriction: { mode: 'everyone' },
    addictive_design_control: {
      disable_infinite_scroll: false,
      disable_autoplay: false,
      disable_streaks: false,
      disable_like_counts: false,
      disable_daily_rewards: false,
    },
    notification_curfew: { start: '00:00', end: '06:00' },
  },
  30: {
    ...AT_EVERY_AGE,
    content_rating: {
      max_ratings: { mpaa: 'NC-17', tvpg: 'TV-MA', esrb: 'AO', pegi: '18', csm: '18+' },
    },
    time_daily_limit: { daily_minutes: 240 },
    time_scheduled_hours: {
      schedule: {
        weekday: { start: '07:00', end: '23:00' },
        weekend: { start: '08:00', end: '24:00' },
      },
    },
    web_filter_level: { level: 'light' },
    usage_timer_notification: { interval_minutes: 60 },
    purchase_approval: { require_approval: false },
    purchase_block_iap: { block_iap: false },
    social_chat_control: { mode: 'everyone' },
    privacy_account_creation: { require_approval: false },
    age_gate: { enabled: false },
    dm_restriction: { mode: 'everyone' },
    addictive_design_control: {
      disable_infinite_scroll: false,
      disable_autoplay: false,
      disable_streaks: false,
      disable_like_counts: false,
      disable_daily_rewards: false,
    },
    notification_curfew: { start: '00:00', end: '06:00' },
  },
};

// DOMAIN.md "Strictness": the extremes the multipliers and steps produce across the bands.
const STRICTNESS_EXTREMES: Array<[string, Record<string, unknown>]> = [
  ['time_daily_limit', { daily_minutes: 42 }], // strict, 60 × 0.7
  ['time_daily_limit', { daily_minutes: 312 }], // relaxed, 240 × 1.3
  ['usage_timer_notification', { interval_minutes: 15 }], // strict keeps 15
  ['usage_timer_notification', { interval_minutes: 45 }], // strict, 60 − 15
  ['usage_timer_notification', { interval_minutes: 75 }], // relaxed, 60 + 15
  ['web_filter_level', { level: 'moderate' }], // strict from light, relaxed from strict
];

const WRONG: Array<[string, string, unknown]> = [
  ['unknown property', 'web_safesearch', { enabled: true, extra: 1 }],
  ['wrong type', 'web_safesearch', { enabled: 'yes' }],
  ['missing property', 'time_daily_limit', {}],
  ['too many minutes', 'time_daily_limit', { daily_minutes: 5000 }],
  ['fractional minutes', 'time_daily_limit', { daily_minutes: 90.5 }],
  ['unknown filter level', 'web_filter_level', { level: 'extreme' }],
  ['hour 25', 'notification_curfew', { start: '25:00', end: '07:00' }],
  [
    'hour 25 in a schedule',
    'time_scheduled_hours',
    {
      schedule: {
        weekday: { start: '07:00', end: '25:00' },
        weekend: { start: '08:00', end: '22:00' },
      },
    },
  ],
  ['minute 60', 'notification_curfew', { start: '20:60', end: '07:00' }],
  [
    'unknown rating',
    'content_rating',
    { max_ratings: { mpaa: 'X', tvpg: 'TV-MA', esrb: 'M', pegi: '16', csm: '17+' } },
  ],
  [
    'rating from another system',
    'content_rating',
    { max_ratings: { mpaa: 'M', tvpg: 'TV-MA', esrb: 'M', pegi: '16', csm: '17+' } },
  ],
  [
    'missing rating system',
    'content_rating',
    { max_ratings: { mpaa: 'R', tvpg: 'TV-MA', esrb: 'M', pegi: '16' } },
  ],
  ['one design flag missing', 'addictive_design_control', { disable_infinite_scroll: true }],
  ['timer of zero', 'usage_timer_notification', { interval_minutes: 0 }],
  ['unknown chat mode', 'social_chat_control', { mode: 'strangers' }],
  ['not an object', 'age_gate', true],
  ['bad domain', 'web_custom_blocklist', { domains: ['not a domain'] }],
];

/** Where a schema leaves a value unbounded or an object open; empty when it is tight. */
function looseSpots(schema: unknown, path: string): string[] {
  if (typeof schema !== 'object' || schema === null) {
    return [`${path}: not a schema`];
  }
  const node = schema as Record<string, unknown>;
  const spots: string[] = [];
  switch (node.type) {
    case 'object': {
      const properties = (node.properties ?? {}) as Record<string, unknown>;
      if (node.additionalProperties !== false) {
        spots.push(`${path}: additionalProperties is not false`);
      }
      const required = Array.isArray(node.required) ? (node.required as string[]) : [];
      for (const key of required) {
        if (!(key in properties)) {
          spots.push(`${path}: requires undeclared ${key}`);
        }
      }
      for (const [key, child] of Object.entries(properties)) {
        spots.push(...looseSpots(child, `${path}.${key}`));
      }
      break;
    }
    case 'array':
      if (typeof node.maxItems !== 'number') {
        spots.push(`${path}: array without maxItems`);
      }
      spots.push(...looseSpots(node.items, `${path}[]`));
      break;
    case 'string':
      if (!node.enum && !node.pattern && typeof node.maxLength !== 'number') {
        spots.push(`${path}: string without enum, pattern or maxLength`);
      }
      break;
    case 'integer':
    case 'number':
      if (typeof node.minimum !== 'number' || typeof node.maximum !== 'number') {
        spots.push(`${path}: number without minimum and maximum`);
      }
      break;
    case 'boolean':
      break;
    default:
      spots.push(`${path}: unexpected type ${String(node.type)}`);
  }
  return spots;
}

describe('rule registry', () => {
  it('holds 123 unique categories, each findable by name', () => {
    expect(RULE_REGISTRY).toHaveLength(123);
    const names = RULE_REGISTRY.map((entry) => entry.category);
    expect(new Set(names).size).toBe(123);
    for (const entry of RULE_REGISTRY) {
      expect(entry.category).toMatch(/^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/);
      expect(findRuleCategory(entry.category)).toBe(entry);
    }
    expect(findRuleCategory('no_such_rule')).toBeUndefined();
  });

  it('contains the 47 categories DOMAIN.md names, in their groups', () => {
    expect(Object.keys(KNOWN)).toHaveLength(47);
    for (const [category, group] of Object.entries(KNOWN)) {
      expect(findRuleCategory(category)?.group, category).toBe(group);
    }
  });

  it('gives every category a title, a description and honest capabilities', () => {
    const titles = new Set(RULE_REGISTRY.map((entry) => entry.name));
    expect(titles.size).toBe(123);
    const known: readonly string[] = CAPABILITIES;
    for (const entry of RULE_REGISTRY) {
      expect(entry.name.length, entry.category).toBeGreaterThan(0);
      expect(entry.description.length, entry.category).toBeGreaterThan(20);
      expect(entry.description.length, entry.category).toBeLessThanOrEqual(300);
      expect(entry.capabilities.length, entry.category).toBeGreaterThan(0);
      expect(new Set(entry.capabilities).size, entry.category).toBe(entry.capabilities.length);
      for (const capability of entry.capabilities) {
        expect(known, entry.category).toContain(capability);
      }
    }
  });

  it('flags engagement exactly for the engagement group', () => {
    for (const entry of RULE_REGISTRY) {
      expect(entry.engagement, entry.category).toBe(entry.group === 'engagement');
    }
    expect(findRuleCategory('infinite_scroll_block')?.engagement).toBe(true);
    expect(findRuleCategory('addictive_pattern_block')?.engagement).toBe(true);
  });

  it('has closed, bounded schemas that compile', () => {
    for (const entry of RULE_REGISTRY) {
      expect(entry.config_schema.type, entry.category).toBe('object');
      expect(looseSpots(entry.config_schema, entry.category)).toEqual([]);
      expect(() => validatorFor(entry.category), entry.category).not.toThrow();
    }
  });

  it('has a default config that satisfies its own schema', () => {
    for (const entry of RULE_REGISTRY) {
      const validate = validatorFor(entry.category);
      expect(
        validate(entry.default_config),
        `${entry.category}: ${ajv.errorsText(validate.errors)}`,
      ).toBe(true);
    }
  });

  describe('quick-setup configurations from DOMAIN.md', () => {
    for (const [age, configs] of Object.entries(QUICK_SETUP_BY_AGE)) {
      it(`accepts all 20 at age ${age}`, () => {
        expect(Object.keys(configs)).toHaveLength(20);
        for (const [category, config] of Object.entries(configs)) {
          const validate = validatorFor(category);
          expect(validate(config), `${category}: ${ajv.errorsText(validate.errors)}`).toBe(true);
        }
      });
    }

    it('accepts the strictness extremes', () => {
      for (const [category, config] of STRICTNESS_EXTREMES) {
        expect(accepts(category, config), `${category} ${JSON.stringify(config)}`).toBe(true);
      }
    });

    it.each(WRONG)('rejects %s', (_label, category, config) => {
      expect(accepts(category, config)).toBe(false);
    });
  });
});
