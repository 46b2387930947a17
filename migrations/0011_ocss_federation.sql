-- OCSS federation (CONTRACT.md §9). Every DID on the trust list is one entry with its
-- signing key; the trust list itself is kept as issued (the exact bytes served), and a new
-- issue is written only when the entries change.
create table ocss_entries (
  did text primary key,
  entity text not null check (entity in ('steward', 'provider', 'advisor')),
  display_name text not null,
  roles jsonb not null,
  tier text not null check (tier in ('verified', 'provisional')),
  status text not null check (status in ('active', 'suspended', 'revoked')),
  -- The entry's Ed25519 signing key as a public JWK (kty OKP, crv Ed25519, kid, use sig).
  public_jwk jsonb not null,
  -- The key_id signers put in Signature-Input: <did>#<kid>, kid the RFC 7638 thumbprint.
  key_id text not null unique,
  registered_at timestamptz not null,
  updated_at timestamptz not null
);

-- Advisors registered by a developer org (POST /developers/orgs/{orgId}/advisors); each is
-- also an entry (did:ocss:<slug>).
create table org_advisors (
  id uuid primary key,
  org_id uuid not null references developer_orgs (id) on delete cascade,
  slug text not null unique,
  did text not null unique references ocss_entries (did) on delete cascade,
  display_name text not null,
  scope text not null check (scope in ('family', 'global')),
  scope_family_id uuid references families (id) on delete set null,
  manifest_url text,
  publisher_org text,
  callback_url text,
  capability_domains jsonb not null,
  created_at timestamptz not null
);
create index org_advisors_org on org_advisors (org_id, created_at desc);

create table trust_list_issues (
  number integer primary key,
  issued_at timestamptz not null,
  -- SHA-256 of the canonical entries: an unchanged set never makes a new issue.
  entries_digest text not null,
  -- The response body exactly as served (ETag = its SHA-256).
  body text not null
);

-- Nonces of signed requests already seen, single use within the signature window (shared
-- by every instance on this database when there is no Redis).
create table ocss_nonces (
  key_id text not null,
  nonce text not null,
  expires_at timestamptz not null,
  primary key (key_id, nonce)
);
create index ocss_nonces_expiry on ocss_nonces (expires_at);
