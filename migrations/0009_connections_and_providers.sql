-- A family's connections to the platforms that enforce its rules. Credentials are sealed
-- (AES-256-GCM, see credential-cipher.ts) and never leave the service; `profiles` are the
-- child profiles an OAuth-style provider linked when the connection was completed.
create table family_connections (
  id uuid primary key,
  family_id uuid not null references families (id) on delete cascade,
  platform_id text not null,
  status text not null check (status in ('connected', 'pending')),
  credentials bytea,
  credentials_key_id text,
  profiles jsonb,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  last_enforcement_at timestamptz,
  last_enforcement_status text,
  unique (family_id, platform_id),
  check ((credentials is null) = (credentials_key_id is null))
);
create index family_connections_family on family_connections (family_id, created_at desc);

-- Providers of the OCSS directory and the connect configuration each has published (null
-- until it does). The federation capability adds signing keys and trust tiers.
create table providers (
  did text primary key,
  name text not null,
  connect_config jsonb,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
