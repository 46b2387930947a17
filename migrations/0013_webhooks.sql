-- A family's webhook endpoints (CONTRACT.md §8). The signing secret must be recoverable to
-- sign each delivery, so it is sealed (AES-256-GCM, the connections' credential cipher), not
-- hashed. `failing_since` is when the current run of failures began (null while healthy); an
-- endpoint failing for 5 days is disabled with `disabled_reason`.
create table webhooks (
  id uuid primary key,
  family_id uuid not null references families (id) on delete cascade,
  url text not null,
  events jsonb not null,
  secret bytea not null,
  secret_key_id text not null,
  active boolean not null default true,
  failing_since timestamptz,
  disabled_reason text,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index webhooks_family on webhooks (family_id, created_at desc);

-- One row per delivery attempt. Every attempt of one message shares its `message_id` (the
-- `webhook-id` header) and its `payload`, the exact body, serialised once, so a retry sends
-- identical bytes. `seq` orders rows written within the same clock instant.
create table webhook_deliveries (
  id uuid primary key,
  seq bigint generated always as identity,
  webhook_id uuid not null references webhooks (id) on delete cascade,
  message_id text not null,
  event text not null,
  payload text not null,
  status text not null check (status in ('pending', 'succeeded', 'failed')),
  response_code integer,
  error text,
  attempt integer not null check (attempt >= 1),
  next_retry_at timestamptz,
  created_at timestamptz not null,
  attempted_at timestamptz
);
create index webhook_deliveries_webhook on webhook_deliveries (webhook_id, created_at desc, seq desc);
create index webhook_deliveries_message on webhook_deliveries (message_id);
