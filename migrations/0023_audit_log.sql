-- CONTRACT.md §12.1: who changed what, one hash-chained log per family and per org.

-- A chain's tip: the row a writer locks (by updating it) to take the next `seq`, so writers
-- of one chain follow each other and `seq` has no gap; `last_hash` is the `prev_hash` of the
-- next entry. Other chains are not held up.
create table audit_chains (
  chain_id uuid primary key,
  kind text not null check (kind in ('family', 'org')),
  last_seq bigint not null,
  last_hash text not null
);

-- `actor_label` and `changes` hold no personal value (docs/decisions.md "What an audit entry
-- says"); `hash` is the SHA-256 of the entry's JCS form without `hash`.
create table audit_entries (
  id uuid primary key,
  chain_id uuid not null,
  seq bigint not null,
  occurred_at timestamptz not null,
  family_id uuid,
  org_id uuid,
  actor_type text not null check (
    actor_type in ('user', 'api_key', 'mcp_token', 'device', 'system')
  ),
  actor_id text not null,
  actor_label text not null,
  action text not null,
  target_type text not null,
  target_id text not null,
  request_id text,
  changes jsonb not null,
  prev_hash text not null,
  hash text not null,
  unique (chain_id, seq)
);

-- The log is append-only: no statement changes an entry, and only the retention purge and
-- erasure (which say so for their own transaction) remove any. An attacker with SQL access
-- can still disable this, which is what the chain and the signed head are for.
create function audit_entries_append_only() returns trigger
language plpgsql as $$
begin
  if tg_op = 'DELETE' and current_setting('haven.audit_removal', true) = 'on' then
    return old;
  end if;
  raise exception 'audit entries cannot be changed or removed'
    using errcode = '55000', hint = 'the audit log is append-only';
end;
$$;

create trigger audit_entries_append_only
  before update or delete on audit_entries
  for each row execute function audit_entries_append_only();

create function audit_entries_no_truncate() returns trigger
language plpgsql as $$
begin
  raise exception 'audit entries cannot be truncated' using errcode = '55000';
end;
$$;

create trigger audit_entries_no_truncate
  before truncate on audit_entries
  for each statement execute function audit_entries_no_truncate();
