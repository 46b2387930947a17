-- Children of a family (spec: Child). The birth date drives the age band and rule set.
create table children (
  id uuid primary key,
  family_id uuid not null references families (id) on delete cascade,
  name text not null,
  birth_date date not null,
  avatar_url text,
  created_at timestamptz not null,
  updated_at timestamptz not null
);

create index children_family on children (family_id, created_at desc);
