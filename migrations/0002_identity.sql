-- Identity and the developer control plane (CONTRACT.md §2-§3).

-- One row per (issuer, subject) seen in a session token.
create table users (
  id uuid primary key,
  issuer text not null,
  subject text not null,
  email text not null default '',
  name text not null default '',
  created_at timestamptz not null,
  unique (issuer, subject)
);

create table developer_orgs (
  id uuid primary key,
  name text not null,
  slug text not null unique,
  description text not null default '',
  website_url text not null default '',
  logo_url text not null default '',
  owner_user_id uuid not null references users (id),
  tier text not null default 'free',
  rate_limit_rpm integer not null default 100,
  created_at timestamptz not null,
  updated_at timestamptz not null
);

create table developer_org_members (
  id uuid primary key,
  org_id uuid not null references developer_orgs (id) on delete cascade,
  user_id uuid not null references users (id),
  role text not null check (role in ('owner', 'admin', 'member')),
  created_at timestamptz not null,
  unique (org_id, user_id)
);

create index developer_org_members_user on developer_org_members (user_id);

create table developer_api_keys (
  id uuid primary key,
  org_id uuid not null references developer_orgs (id) on delete cascade,
  created_by uuid not null references users (id),
  name text not null,
  key_prefix text not null,
  -- SHA-256 (hex) of the whole secret; the secret itself is never stored.
  key_hash text not null unique,
  environment text not null check (environment in ('test', 'live')),
  scopes text[] not null default '{}',
  expires_at timestamptz,
  revoked_at timestamptz,
  last_used_at timestamptz,
  last_used_ip text,
  created_at timestamptz not null
);

create index developer_api_keys_org on developer_api_keys (org_id, created_at desc);

-- Families: owned by users through membership, or by an org (when made with its keys).
create table families (
  id uuid primary key,
  name text not null,
  -- Set when an API key created it: every key of the org, in this environment, sees it.
  org_id uuid references developer_orgs (id) on delete cascade,
  environment text not null default 'test' check (environment in ('test', 'live')),
  created_at timestamptz not null,
  updated_at timestamptz not null
);

create index families_org on families (org_id, environment, created_at desc);

create table family_members (
  id uuid primary key,
  family_id uuid not null references families (id) on delete cascade,
  user_id uuid not null references users (id),
  role text not null check (role in ('owner', 'parent', 'guardian')),
  joined_at timestamptz not null,
  unique (family_id, user_id)
);

create index family_members_user on family_members (user_id);

create table mcp_tokens (
  id uuid primary key,
  user_id uuid not null references users (id),
  family_id uuid not null references families (id) on delete cascade,
  label text not null,
  token_prefix text not null,
  token_hash text not null unique,
  last_used_at timestamptz,
  created_at timestamptz not null,
  revoked_at timestamptz
);

create index mcp_tokens_user on mcp_tokens (user_id, created_at desc);
