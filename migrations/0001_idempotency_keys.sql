-- Receipts of requests that carried an Idempotency-Key (CONTRACT.md §5).
create table idempotency_keys (
  caller text not null,
  method text not null,
  path text not null,
  key text not null,
  -- SHA-256 of the query string and the raw body: a replay must be byte-identical.
  fingerprint text not null,
  state text not null check (state in ('in_flight', 'completed')),
  response_status integer,
  response_body text,
  response_content_type text,
  created_at timestamptz not null,
  -- An in-flight claim whose process died is taken over after this moment.
  locked_until timestamptz not null,
  expires_at timestamptz not null,
  primary key (caller, method, path, key)
);

create index idempotency_keys_expires_at on idempotency_keys (expires_at);
