-- Enforcement jobs (CONTRACT.md §8): one row per request to push a child's policy in force
-- to the family's connected platforms, with one result per platform. policy_id has no
-- foreign key: the history of what was enforced outlives a deleted policy.
create table enforcement_jobs (
  id uuid primary key,
  child_id uuid not null references children (id) on delete cascade,
  family_id uuid not null references families (id) on delete cascade,
  policy_id uuid not null,
  policy_version integer not null,
  trigger_type text not null check (trigger_type in ('manual', 'policy_change')),
  platform_ids text[],
  status text not null check (status in ('pending', 'running', 'completed', 'failed', 'partial')),
  results jsonb not null default '[]',
  error text,
  created_at timestamptz not null,
  started_at timestamptz,
  completed_at timestamptz
);

create index enforcement_jobs_child on enforcement_jobs (child_id, created_at desc, id desc);
create index enforcement_jobs_family on enforcement_jobs (family_id, created_at desc, id desc);

-- Automatic enforcement coalesces: a child has at most one policy_change job still waiting,
-- and a later change of the policy updates it instead of queueing another.
create unique index enforcement_jobs_one_pending_policy_change on enforcement_jobs (child_id)
  where status = 'pending' and trigger_type = 'policy_change';

-- Sandbox only: failures a developer armed for a (family, platform), Plaid-style, so that
-- partial and failed jobs can be produced on demand. remaining null = until cleared.
create table sandbox_platform_failures (
  family_id uuid not null references families (id) on delete cascade,
  platform_id text not null,
  remaining integer check (remaining is null or remaining >= 0),
  message text not null,
  created_at timestamptz not null,
  primary key (family_id, platform_id)
);
