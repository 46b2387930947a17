-- Live partner adapters (issue 18, CONTRACT.md §10.4).
--
-- A connection whose partner refused its credentials says so, until they are renewed
-- (PATCH /connections/{id}) or a later run is accepted again.
alter table family_connections drop constraint family_connections_status_check;
alter table family_connections add constraint family_connections_status_check
  check (status in ('connected', 'pending', 'credentials_rejected'));

-- What Haven put on each partner profile, so a run converges to the policy and removes only
-- its own entries: list items it added, and for each setting it changed the value it found
-- there first (restored when no rule wants the setting any more). Written before a change
-- is sent, so a run cut off half-way leaves a record the next run converges from.
create table partner_managed_state (
  connection_id uuid primary key references family_connections (id) on delete cascade,
  platform_id text not null,
  -- The partner profile the record describes: new credentials naming another profile start
  -- a new record.
  profile_id text not null,
  state jsonb not null,
  updated_at timestamptz not null,
  -- One run converges a profile at a time (an automatic job and a requested one may start
  -- together, on any worker): the run holding the lease, until when. A lease outlives a
  -- crashed worker by its expiry only.
  lease_owner text,
  lease_until timestamptz
);
