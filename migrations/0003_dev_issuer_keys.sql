-- The built-in development issuer's RS256 key (sandbox without an identity provider).
-- One row: `slot` is always 1, so two processes starting at once keep the same key.
create table dev_issuer_keys (
  slot integer primary key check (slot = 1),
  kid text not null,
  private_key_pem text not null,
  public_jwk jsonb not null,
  created_at timestamptz not null
);
