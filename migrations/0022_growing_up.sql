-- CONTRACT.md §11: a child's protection follows its age on the family's clock.

-- Sandbox test clocks (§11.3): a frozen time that families attached to it live by. Owned by
-- the caller that made it (`owner` as idempotency receipts name callers: a user, an org's
-- environment, a sandbox session); the owning user or org takes its clocks along.
create table test_clocks (
  id uuid primary key,
  owner text not null,
  user_id uuid references users (id) on delete cascade,
  org_id uuid references developer_orgs (id) on delete cascade,
  name text,
  frozen_time timestamptz not null,
  status text not null check (status in ('ready', 'advancing')),
  created_at timestamptz not null
);
create index test_clocks_owner on test_clocks (owner, created_at desc);

-- A family lives by its test clock while attached; deleting the clock returns it to the real
-- clock (the service re-applies its children's ages first).
alter table families add column test_clock_id uuid references test_clocks (id) on delete set null;
create index families_test_clock on families (test_clock_id) where test_clock_id is not null;

-- The effective age whose `age` rules are in force (null: never applied), and the day (UTC, on
-- the family's clock) the age next changes: the daily run reads children by this index, never
-- by a scan. `counting_signals`: the latest age signal of each source (§11.2), kept on the
-- child so a read computes effective_age and age_conflict without another statement.
alter table children add column age_applied integer;
alter table children add column next_age_change_on date;
alter table children add column counting_signals jsonb not null default '[]';

-- Children made before birthdays existed are due today: the first run derives their age
-- rules for the age they have now, and announces only what that changed.
update children set next_age_change_on = (now() at time zone 'UTC')::date;
alter table children alter column next_age_change_on set not null;
create index children_next_age_change on children (next_age_change_on);

create table age_signals (
  id uuid primary key,
  child_id uuid not null references children (id) on delete cascade,
  source text not null,
  age_lower integer,
  age_upper integer,
  method text,
  observed_at timestamptz not null,
  created_at timestamptz not null
);
create index age_signals_child on age_signals (child_id, observed_at desc, id desc);

-- Coming of age pauses a policy for a reason a person did not give.
alter table policies add column paused_reason text check (paused_reason in ('came_of_age'));

-- Enforcement runs for a birthday and to release a child (§11.4).
alter table enforcement_jobs drop constraint enforcement_jobs_trigger_type_check;
alter table enforcement_jobs add constraint enforcement_jobs_trigger_type_check
  check (trigger_type in ('manual', 'policy_change', 'age_change', 'release'));
