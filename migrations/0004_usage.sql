-- Hourly usage rollups per API key and route pattern (spec: DeveloperUsage).
create table developer_usage (
  id uuid primary key,
  key_id uuid not null references developer_api_keys (id) on delete cascade,
  org_id uuid not null references developer_orgs (id) on delete cascade,
  hour timestamptz not null,
  endpoint text not null,
  status_2xx integer not null default 0,
  status_4xx integer not null default 0,
  status_5xx integer not null default 0,
  total_requests integer not null default 0,
  unique (key_id, hour, endpoint)
);

create index developer_usage_org_hour on developer_usage (org_id, hour desc);
