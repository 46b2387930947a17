-- Anonymous sandbox sessions (X-Sandbox-Session): one per name, each owning a sandbox user.
-- Bounded in number and idle time (config SANDBOX_MAX_SESSIONS, SANDBOX_SESSION_IDLE_DAYS);
-- last_seen_at is written in batches, so it may lag the truth by up to a minute.
create table sandbox_sessions (
  name text primary key,
  user_id uuid not null unique references users (id) on delete cascade,
  created_at timestamptz not null,
  last_seen_at timestamptz not null
);
create index sandbox_sessions_last_seen on sandbox_sessions (last_seen_at);

-- Sessions created before this table existed keep their user and data.
insert into sandbox_sessions (name, user_id, created_at, last_seen_at)
select subject, id, created_at, created_at from users where issuer = 'haven-sandbox-session';
