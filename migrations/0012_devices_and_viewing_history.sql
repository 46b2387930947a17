-- On-device agents of a child (CONTRACT.md §8 device rows). A device authenticates with its
-- `svcdev_` key, of which only the SHA-256 is kept. `family_id` is the child's, copied so a
-- family's devices go with it and tenancy checks need no join.
create table devices (
  id uuid primary key,
  child_id uuid not null references children (id) on delete cascade,
  family_id uuid not null references families (id) on delete cascade,
  device_name text not null,
  platform_id text,
  device_model text,
  os_version text,
  app_version text,
  status text not null check (status in ('active', 'revoked')),
  key_hash text not null unique,
  key_prefix text not null,
  acknowledged_version integer,
  acknowledged_at timestamptz,
  -- The latest `enforcement_status` report's payload, and when the device said it was true.
  enforcement_status jsonb,
  enforcement_reported_at timestamptz,
  last_seen_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  revoked_at timestamptz,
  check ((status = 'revoked') = (revoked_at is not null))
);
create index devices_child on devices (child_id, created_at desc);

-- Every report a device sent and the service accepted, as sent.
create table device_reports (
  id uuid primary key,
  device_id uuid not null references devices (id) on delete cascade,
  child_id uuid not null references children (id) on delete cascade,
  report_type text not null check (
    report_type in (
      'screen_time', 'app_usage', 'web_activity', 'blocked_attempt', 'enforcement_status',
      'viewing'
    )
  ),
  payload jsonb not null,
  reported_at timestamptz not null,
  received_at timestamptz not null
);
create index device_reports_device on device_reports (device_id, received_at desc);

-- What a child watched, from `viewing` reports. An entry outlives its device (a revoked or
-- deleted device does not erase the history), not its child.
create table viewing_history (
  id uuid primary key,
  child_id uuid not null references children (id) on delete cascade,
  device_id uuid references devices (id) on delete set null,
  platform text not null,
  title text not null,
  series_title text,
  watched_at timestamptz not null,
  created_at timestamptz not null
);
create index viewing_history_child on viewing_history (child_id, watched_at desc, id desc);
