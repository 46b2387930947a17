-- CONTRACT.md §12.3: erasure of a family or a child, and the receipt that proves it.

-- One receipt per erasure. It names the subject by id only and counts what went, per table:
-- no personal value. Who may read it: the user who erased (null for an API key), and the keys
-- of the org (and environment) the family belonged to. `releases` is the outcome per
-- connected platform ([{platform_id, status}]); `completed_at` and `signature` (a compact JWS
-- by the steward key over the receipt) are set once every release has ended. The family's
-- test clock, if any, dates the receipt (kept here: the family itself is gone). Kept 400 days
-- by `requested_at` (the retention purge).
create table erasure_receipts (
  id uuid primary key,
  subject_type text not null check (subject_type in ('family', 'child')),
  subject_id uuid not null,
  requested_by_user_id uuid,
  org_id uuid,
  environment text,
  test_clock_id uuid,
  requested_at timestamptz not null,
  completed_at timestamptz,
  erased jsonb not null,
  releases jsonb not null,
  signature text,
  check ((completed_at is null) = (signature is null))
);
create index erasure_receipts_requested_at on erasure_receipts (requested_at);

-- What the erasure's release job needs and nothing else survives the erasure to hold: per
-- connection, its platform, its credentials and what Haven applied there, sealed with the
-- credential cipher (bound to the erasure id). Deleted when the job ends, and by the
-- erasure's deadline job after `expires_at` (7 days) at the latest; never in the job queue.
create table erasure_release_secrets (
  erasure_id uuid primary key references erasure_receipts (id) on delete cascade,
  sealed bytea not null,
  key_id text not null,
  expires_at timestamptz not null
);
