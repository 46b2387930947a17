-- Policies of a child and their rules (CONTRACT.md §7). Every change to a policy or its rules
-- raises `version` by one; one rule per (policy, category).
create table policies (
  id uuid primary key,
  child_id uuid not null references children (id) on delete cascade,
  name text not null,
  status text not null check (status in ('draft', 'active', 'paused')),
  priority integer not null default 0,
  version integer not null default 1,
  created_at timestamptz not null,
  updated_at timestamptz not null
);

create index policies_child on policies (child_id, created_at desc);

create table policy_rules (
  id uuid primary key,
  policy_id uuid not null references policies (id) on delete cascade,
  category text not null,
  enabled boolean not null,
  config jsonb not null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  unique (policy_id, category)
);
