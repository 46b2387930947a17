// The 20 quick-setup rules for an age and a strictness (DOMAIN.md "The 20 quick-setup rules
// and their configuration", "Strictness"). All 20 are always present: a rule that does not
// apply at an age is there with `enabled: false` and a permissive config.
import { type MaxRatings, maxRatingsForAge } from '../ratings/catalog.js';
import { type AgeGroup, bandForAge, type FilterLevel } from './bands.js';

export type Strictness = 'relaxed' | 'recommended' | 'strict';

export interface GeneratedRule {
  category: string;
  enabled: boolean;
  config: Record<string, unknown>;
}

export interface RuleSummary {
  screen_time_minutes: number;
  bedtime_hour: number;
  web_filter_level: FilterLevel;
  content_rating: string;
  total_rules_enabled: number;
}

export interface AgeRules {
  age_group: AgeGroup;
  max_ratings: MaxRatings;
  rules: GeneratedRule[];
  rule_summary: RuleSummary;
}

const STRICTER: Record<FilterLevel, FilterLevel> = {
  light: 'moderate',
  moderate: 'strict',
  strict: 'strict',
};
const LOOSER: Record<FilterLevel, FilterLevel> = {
  strict: 'moderate',
  moderate: 'light',
  light: 'light',
};

function adjusted(strictness: Strictness, band: ReturnType<typeof bandForAge>) {
  switch (strictness) {
    case 'strict':
      return {
        dailyMinutes: Math.floor(band.dailyMinutes * 0.7),
        timer: band.usageTimerMinutes > 15 ? band.usageTimerMinutes - 15 : band.usageTimerMinutes,
        level: STRICTER[band.filterLevel],
      };
    case 'relaxed':
      return {
        dailyMinutes: Math.floor(band.dailyMinutes * 1.3),
        timer: band.usageTimerMinutes + 15,
        level: LOOSER[band.filterLevel],
      };
    case 'recommended':
      return {
        dailyMinutes: band.dailyMinutes,
        timer: band.usageTimerMinutes,
        level: band.filterLevel,
      };
  }
}

const rule = (category: string, enabled: boolean, config: Record<string, unknown>) => ({
  category,
  enabled,
  config,
});

export function rulesForAge(age: number, strictness: Strictness = 'recommended'): AgeRules {
  const band = bandForAge(age);
  const maxRatings = maxRatingsForAge(age);
  const { dailyMinutes, timer, level } = adjusted(strictness, band);
  const under13 = age < 13;
  const teen = age >= 13 && age <= 16;
  const adult = age >= 18;
  const allDesignOff = age >= 17;

  const rules: GeneratedRule[] = [
    rule('content_rating', true, { max_ratings: maxRatings }),
    rule('web_safesearch', true, { enabled: true }),
    rule('monitoring_activity', true, { enabled: true }),
    rule('time_daily_limit', true, { daily_minutes: dailyMinutes }),
    rule('time_scheduled_hours', true, {
      schedule: {
        weekday: { start: '07:00', end: band.bedtime.weekdayEnd },
        weekend: { start: '08:00', end: band.bedtime.weekendEnd },
      },
    }),
    rule('web_filter_level', true, { level }),
    rule('privacy_profile_visibility', true, { visibility: 'private' }),
    rule('algo_feed_control', true, { mode: 'chronological' }),
    rule('targeted_ad_block', true, { block_targeted_ads: true }),
    rule('geolocation_opt_in', true, { geolocation_allowed: false }),
    rule('data_deletion_request', true, { enabled: true }),
    rule('purchase_approval', !adult, { require_approval: !adult }),
    rule('purchase_block_iap', under13, { block_iap: under13 }),
    rule('social_chat_control', under13, { mode: under13 ? 'friends_only' : 'everyone' }),
    rule('privacy_account_creation', under13, { require_approval: under13 }),
    rule('age_gate', under13, under13 ? { enabled: true, min_age: 13 } : { enabled: false }),
    rule('dm_restriction', under13 || teen, {
      mode: under13 ? 'none' : teen ? 'contacts_only' : 'everyone',
    }),
    rule('addictive_design_control', !allDesignOff, {
      disable_infinite_scroll: !allDesignOff,
      disable_autoplay: !allDesignOff,
      disable_streaks: under13,
      disable_like_counts: under13,
      disable_daily_rewards: under13,
    }),
    rule(
      'notification_curfew',
      true,
      under13
        ? { start: '20:00', end: '07:00' }
        : teen
          ? { start: '22:00', end: '06:00' }
          : { start: '00:00', end: '06:00' },
    ),
    rule('usage_timer_notification', true, { interval_minutes: timer }),
  ];

  return {
    age_group: band.group,
    max_ratings: maxRatings,
    rules,
    rule_summary: {
      screen_time_minutes: dailyMinutes,
      bedtime_hour: Number(band.bedtime.weekdayEnd.slice(0, 2)),
      web_filter_level: level,
      content_rating: maxRatings.mpaa,
      total_rules_enabled: rules.filter((r) => r.enabled).length,
    },
  };
}
