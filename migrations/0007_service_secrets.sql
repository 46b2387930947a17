-- Secrets the service generates for itself in the sandbox (the reference OAuth provider's
-- HMAC key, the credentials encryption key when none is configured). One row per name; the
-- first writer wins, so every process of a deployment shares the same value.
create table service_secrets (
  name text primary key,
  value bytea not null,
  created_at timestamptz not null default now()
);
