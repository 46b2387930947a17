import { describe, expect, it } from 'vitest';
import { QUICK_SETUP_CATEGORIES } from '../../../test/quick-setup-categories.js';
import { ageOn, bandForAge, nextAgeChangeOn } from './bands.js';
import { rulesForAge } from './derivation.js';

const config = (age: number, category: string, strictness?: 'relaxed' | 'recommended' | 'strict') =>
  rulesForAge(age, strictness).rules.find((r) => r.category === category);

describe('age', () => {
  it('counts whole years in UTC, one less before this year’s birthday', () => {
    const now = new Date('2026-06-15T12:00:00Z');
    expect(ageOn('2016-06-15', now)).toBe(10);
    expect(ageOn('2016-06-16', now)).toBe(9);
    expect(ageOn('2016-05-31', now)).toBe(10);
    expect(ageOn('2026-06-15', now)).toBe(0);
    // Born on 29 February: the birthday counts from 1 March in common years.
    expect(ageOn('2012-02-29', new Date('2026-02-28T23:59:59Z'))).toBe(13);
    expect(ageOn('2012-02-29', new Date('2026-03-01T00:00:00Z'))).toBe(14);
  });

  it('names the day the age next changes: the next birthday, 29 February on 1 March in common years', () => {
    const at = (iso: string) => new Date(iso);
    expect(nextAgeChangeOn('2016-06-15', at('2026-06-14T23:59:59Z'))).toBe('2026-06-15');
    // On the birthday itself the age has just changed: the next change is a year away.
    expect(nextAgeChangeOn('2016-06-15', at('2026-06-15T00:00:00Z'))).toBe('2027-06-15');
    expect(nextAgeChangeOn('2016-01-01', at('2026-12-31T12:00:00Z'))).toBe('2027-01-01');
    expect(nextAgeChangeOn('2012-02-29', at('2026-02-10T00:00:00Z'))).toBe('2026-03-01');
    expect(nextAgeChangeOn('2012-02-29', at('2027-03-01T00:00:00Z'))).toBe('2028-02-29');
    expect(nextAgeChangeOn('2012-02-29', at('2028-02-29T00:00:00Z'))).toBe('2029-03-01');
    // Where it says the age changes, ageOn agrees, and not the day before.
    for (const [birth, now] of [
      ['2012-02-29', '2026-02-10T00:00:00Z'],
      ['2016-06-15', '2026-06-14T10:00:00Z'],
      ['2010-12-31', '2026-01-05T10:00:00Z'],
    ] as const) {
      const next = nextAgeChangeOn(birth, at(now));
      const dayBefore = new Date(Date.parse(`${next}T00:00:00Z`) - 1);
      expect(ageOn(birth, at(`${next}T00:00:00Z`))).toBe(ageOn(birth, dayBefore) + 1);
    }
  });

  it('maps ages to the five bands', () => {
    const groups = [0, 6, 7, 9, 10, 12, 13, 16, 17, 40].map((age) => bandForAge(age).group);
    expect(groups).toEqual([
      'toddler',
      'toddler',
      'child',
      'child',
      'preteen',
      'preteen',
      'teen',
      'teen',
      'young_adult',
      'young_adult',
    ]);
  });
});

describe('the 20 quick-setup rules', () => {
  it('are always the same 20 categories, at every age and strictness', () => {
    for (let age = 0; age <= 30; age++) {
      for (const strictness of ['relaxed', 'recommended', 'strict'] as const) {
        const categories = rulesForAge(age, strictness)
          .rules.map((r) => r.category)
          .sort();
        expect(categories).toEqual(QUICK_SETUP_CATEGORIES);
      }
    }
  });

  it('follow the band table (recommended)', () => {
    const expected: Array<[number, string, number, string, string, string, number]> = [
      // age, group, minutes, weekday end, weekend end, level, timer
      [5, 'toddler', 60, '19:00', '20:00', 'strict', 15],
      [8, 'child', 90, '20:00', '21:00', 'strict', 15],
      [11, 'preteen', 120, '21:00', '22:00', 'moderate', 15],
      [14, 'teen', 180, '22:00', '23:00', 'light', 30],
      [17, 'young_adult', 240, '23:00', '24:00', 'light', 60],
    ];
    for (const [age, group, minutes, weekdayEnd, weekendEnd, level, timer] of expected) {
      const result = rulesForAge(age);
      expect(result.age_group).toBe(group);
      expect(config(age, 'time_daily_limit')?.config).toEqual({ daily_minutes: minutes });
      expect(config(age, 'time_scheduled_hours')?.config).toEqual({
        schedule: {
          weekday: { start: '07:00', end: weekdayEnd },
          weekend: { start: '08:00', end: weekendEnd },
        },
      });
      expect(config(age, 'web_filter_level')?.config).toEqual({ level });
      expect(config(age, 'usage_timer_notification')?.config).toEqual({ interval_minutes: timer });
      expect(result.rule_summary).toMatchObject({
        screen_time_minutes: minutes,
        bedtime_hour: Number(weekdayEnd.slice(0, 2)),
        web_filter_level: level,
        content_rating: result.max_ratings.mpaa,
      });
    }
  });

  it('apply strictness to minutes, timer and filter level only', () => {
    expect(config(11, 'time_daily_limit', 'strict')?.config).toEqual({ daily_minutes: 84 });
    expect(config(11, 'time_daily_limit', 'relaxed')?.config).toEqual({ daily_minutes: 156 });
    expect(config(14, 'usage_timer_notification', 'strict')?.config).toEqual({
      interval_minutes: 15,
    });
    expect(config(5, 'usage_timer_notification', 'strict')?.config).toEqual({
      interval_minutes: 15,
    });
    expect(config(5, 'usage_timer_notification', 'relaxed')?.config).toEqual({
      interval_minutes: 30,
    });
    expect(config(14, 'web_filter_level', 'strict')?.config).toEqual({ level: 'moderate' });
    expect(config(11, 'web_filter_level', 'relaxed')?.config).toEqual({ level: 'light' });
    expect(config(5, 'web_filter_level', 'strict')?.config).toEqual({ level: 'strict' });
  });

  it('switch age-dependent rules off as the child grows (enabled flags per age)', () => {
    const enabled = (age: number) =>
      Object.fromEntries(rulesForAge(age).rules.map((r) => [r.category, r.enabled]));
    const child = enabled(11);
    expect(Object.values(child).every(Boolean)).toBe(true);
    expect(rulesForAge(11).rule_summary.total_rules_enabled).toBe(20);
    expect(enabled(14)).toMatchObject({
      purchase_approval: true,
      purchase_block_iap: false,
      social_chat_control: false,
      privacy_account_creation: false,
      age_gate: false,
      dm_restriction: true,
      addictive_design_control: true,
    });
    expect(enabled(17)).toMatchObject({
      purchase_approval: true,
      dm_restriction: false,
      addictive_design_control: false,
    });
    expect(enabled(18)).toMatchObject({ purchase_approval: false });
    expect(rulesForAge(18).rule_summary.total_rules_enabled).toBe(13);
  });

  it('configure the off forms permissively', () => {
    expect(config(14, 'age_gate')?.config).toEqual({ enabled: false });
    expect(config(12, 'age_gate')?.config).toEqual({ enabled: true, min_age: 13 });
    expect(config(14, 'dm_restriction')?.config).toEqual({ mode: 'contacts_only' });
    expect(config(17, 'dm_restriction')?.config).toEqual({ mode: 'everyone' });
    expect(config(14, 'addictive_design_control')?.config).toEqual({
      disable_infinite_scroll: true,
      disable_autoplay: true,
      disable_streaks: false,
      disable_like_counts: false,
      disable_daily_rewards: false,
    });
    expect(config(9, 'notification_curfew')?.config).toEqual({ start: '20:00', end: '07:00' });
    expect(config(15, 'notification_curfew')?.config).toEqual({ start: '22:00', end: '06:00' });
    expect(config(30, 'notification_curfew')?.config).toEqual({ start: '00:00', end: '06:00' });
    expect(config(8, 'content_rating')?.config).toEqual({
      max_ratings: { mpaa: 'PG', tvpg: 'TV-Y7', esrb: 'E', pegi: '7', csm: '7+' },
    });
  });
});

describe('generated rules against the registry', () => {
  it('validate against their category schemas at every age and strictness', async () => {
    const { Ajv } = await import('ajv');
    const { findRuleCategory } = await import('../rules/registry.js');
    const ajv = new Ajv({ strict: false, allErrors: true });
    for (let age = 0; age <= 25; age++) {
      for (const strictness of ['relaxed', 'recommended', 'strict'] as const) {
        for (const generated of rulesForAge(age, strictness).rules) {
          const category = findRuleCategory(generated.category);
          expect(category, generated.category).toBeDefined();
          const validate = ajv.compile(category?.config_schema ?? {});
          expect(
            validate(generated.config),
            `${generated.category} at ${age}/${strictness}: ${JSON.stringify(validate.errors)}`,
          ).toBe(true);
        }
      }
    }
  });
});
