-- CONTRACT.md §11.1: every rule carries `origin` (`age`: written by quick setup,
-- generate-from-age or a birthday; `custom`: written by a person or a key), and a policy carries
-- the `strictness` it was last generated with (`null` until first generated from age).
--
-- Existing rows are classified from the data there is (the decision "Rule origin and policy strictness"):
--  * The moment a rule was generated is its own `updated_at`: a generation writes all 20 rules
--    with one timestamp, and a later edit of a rule restamps that rule only (the policy's
--    `updated_at` moves with every edit, so it would compare untouched rules to a later age).
--  * A policy counts as generated from age when it holds all 20 quick-setup categories (every
--    generation writes all 20; a policy made by hand rarely does). Its strictness is the one
--    under which most of its rules equal what generation gives for the child's age at each
--    rule's `updated_at`; on a tie `recommended`, then `strict`, then `relaxed` (only
--    `time_daily_limit` tells the three apart at every age). Any other policy: `null`.
--  * A rule of a policy with a strictness is `age` when its `enabled` and `config` equal what
--    generation gives (that strictness, the child's age at the rule's `updated_at`), else
--    `custom`; every rule of a policy without a strictness is `custom`.
-- The functions below restate src/modules/policies/age-bands.ts and age-rules.ts as they
-- are at this migration (src/db/migrate.test.ts checks them against the TypeScript at every age
-- and strictness); they exist only while this migration runs.

alter table policies
  add column strictness text check (strictness in ('relaxed', 'recommended', 'strict'));

-- Every writer states the origin (no default): a rule written without one is a bug, not a guess.
alter table policy_rules add column origin text check (origin in ('age', 'custom'));

-- Whole years since `birth` on the UTC day of `at`, one less before this year's birthday
-- (ageOn), never below 0 (as the services clamp it).
create function haven_0021_age_on(birth date, at timestamptz) returns integer
language sql immutable as $$
  select greatest(0,
    extract(year from (at at time zone 'UTC'))::integer - extract(year from birth)::integer
    - case
        when (extract(month from (at at time zone 'UTC')), extract(day from (at at time zone 'UTC')))
          < (extract(month from birth), extract(day from birth))
        then 1 else 0
      end)
$$;

-- The 20 rules generation gives for an age and a strictness (rulesForAge). Daily minutes are
-- the TypeScript's own results (Math.floor of a float product: 90 × 0.7 gives 62, not 63).
create function haven_0021_age_rules(at_age integer, want text)
returns table (category text, enabled boolean, config jsonb)
language sql immutable as $$
  with band as (
    select
      case when at_age >= 17 then 4 when at_age >= 13 then 3 when at_age >= 10 then 2 when at_age >= 7 then 1 else 0 end as i,
      at_age < 13 as under13,
      at_age >= 13 and at_age <= 16 as teen,
      at_age >= 18 as adult,
      at_age >= 17 as all_design_off
  ),
  b as (
    select band.*,
      (array[60, 90, 120, 180, 240])[i + 1] as minutes_recommended,
      (array[42, 62, 84, 125, 168])[i + 1] as minutes_strict,
      (array[78, 117, 156, 234, 312])[i + 1] as minutes_relaxed,
      (array[15, 15, 15, 30, 60])[i + 1] as timer,
      (array['strict', 'strict', 'moderate', 'light', 'light'])[i + 1] as level,
      (array['19:00', '20:00', '21:00', '22:00', '23:00'])[i + 1] as weekday_end,
      (array['20:00', '21:00', '22:00', '23:00', '24:00'])[i + 1] as weekend_end,
      case
        when at_age >= 18 then '{"mpaa": "NC-17", "tvpg": "TV-MA", "esrb": "AO", "pegi": "18", "csm": "18+"}'
        when at_age >= 17 then '{"mpaa": "R", "tvpg": "TV-MA", "esrb": "M", "pegi": "16", "csm": "17+"}'
        when at_age >= 13 then '{"mpaa": "PG-13", "tvpg": "TV-14", "esrb": "T", "pegi": "12", "csm": "13+"}'
        when at_age >= 10 then '{"mpaa": "PG", "tvpg": "TV-PG", "esrb": "E10+", "pegi": "7", "csm": "10+"}'
        when at_age >= 7 then '{"mpaa": "PG", "tvpg": "TV-Y7", "esrb": "E", "pegi": "7", "csm": "7+"}'
        else '{"mpaa": "G", "tvpg": "TV-Y", "esrb": "E", "pegi": "3", "csm": "5+"}'
      end::jsonb as max_ratings
    from band
  ),
  s as (
    select b.*,
      case want
        when 'strict' then minutes_strict when 'relaxed' then minutes_relaxed else minutes_recommended
      end as minutes,
      case want
        when 'strict' then case when timer > 15 then timer - 15 else timer end
        when 'relaxed' then timer + 15
        else timer
      end as interval_minutes,
      case want
        when 'strict' then case level when 'light' then 'moderate' else 'strict' end
        when 'relaxed' then case level when 'strict' then 'moderate' else 'light' end
        else level
      end as filter_level
    from b
  )
  select r.category, r.enabled, r.config
  from s
  cross join lateral (values
    ('content_rating', true, jsonb_build_object('max_ratings', s.max_ratings)),
    ('web_safesearch', true, '{"enabled": true}'::jsonb),
    ('monitoring_activity', true, '{"enabled": true}'::jsonb),
    ('time_daily_limit', true, jsonb_build_object('daily_minutes', s.minutes)),
    ('time_scheduled_hours', true, jsonb_build_object('schedule', jsonb_build_object(
      'weekday', jsonb_build_object('start', '07:00', 'end', s.weekday_end),
      'weekend', jsonb_build_object('start', '08:00', 'end', s.weekend_end)))),
    ('web_filter_level', true, jsonb_build_object('level', s.filter_level)),
    ('privacy_profile_visibility', true, '{"visibility": "private"}'::jsonb),
    ('algo_feed_control', true, '{"mode": "chronological"}'::jsonb),
    ('targeted_ad_block', true, '{"block_targeted_ads": true}'::jsonb),
    ('geolocation_opt_in', true, '{"geolocation_allowed": false}'::jsonb),
    ('data_deletion_request', true, '{"enabled": true}'::jsonb),
    ('purchase_approval', not s.adult, jsonb_build_object('require_approval', not s.adult)),
    ('purchase_block_iap', s.under13, jsonb_build_object('block_iap', s.under13)),
    ('social_chat_control', s.under13,
      jsonb_build_object('mode', case when s.under13 then 'friends_only' else 'everyone' end)),
    ('privacy_account_creation', s.under13, jsonb_build_object('require_approval', s.under13)),
    ('age_gate', s.under13, case when s.under13
      then '{"enabled": true, "min_age": 13}'::jsonb else '{"enabled": false}'::jsonb end),
    ('dm_restriction', s.under13 or s.teen, jsonb_build_object('mode',
      case when s.under13 then 'none' when s.teen then 'contacts_only' else 'everyone' end)),
    ('addictive_design_control', not s.all_design_off, jsonb_build_object(
      'disable_infinite_scroll', not s.all_design_off,
      'disable_autoplay', not s.all_design_off,
      'disable_streaks', s.under13,
      'disable_like_counts', s.under13,
      'disable_daily_rewards', s.under13)),
    ('notification_curfew', true, case
      when s.under13 then '{"start": "20:00", "end": "07:00"}'::jsonb
      when s.teen then '{"start": "22:00", "end": "06:00"}'::jsonb
      else '{"start": "00:00", "end": "06:00"}'::jsonb
    end),
    ('usage_timer_notification', true, jsonb_build_object('interval_minutes', s.interval_minutes))
  ) as r(category, enabled, config)
$$;

-- Whether generation (this strictness, the child's age when the rule was last written) gives
-- exactly this rule.
create function haven_0021_generated(rule_row uuid, want text) returns boolean
language sql stable as $$
  select exists (
    select 1
    from policy_rules r
    join policies p on p.id = r.policy_id
    join children c on c.id = p.child_id
    cross join lateral haven_0021_age_rules(haven_0021_age_on(c.birth_date, r.updated_at), want) g
    where r.id = rule_row
      and g.category = r.category and g.enabled = r.enabled and g.config = r.config)
$$;

update policies p
set strictness = (
  select s.strictness
  from (values ('recommended', 1), ('strict', 2), ('relaxed', 3)) as s(strictness, preference)
  order by
    (select count(*) from policy_rules r
      where r.policy_id = p.id and haven_0021_generated(r.id, s.strictness)) desc,
    s.preference
  limit 1)
where (
  select count(*) from haven_0021_age_rules(0, 'recommended') g
  where exists (select 1 from policy_rules r where r.policy_id = p.id and r.category = g.category)
) = 20;

update policy_rules r
set origin = case
  when p.strictness is not null and haven_0021_generated(r.id, p.strictness) then 'age'
  else 'custom'
end
from policies p
where p.id = r.policy_id;

alter table policy_rules alter column origin set not null;

drop function haven_0021_generated(uuid, text);
drop function haven_0021_age_rules(integer, text);
drop function haven_0021_age_on(date, timestamptz);
