-- Which Haven processes are alive (src/jobs/liveness.ts). Every process with a job queue
-- upserts its row every few seconds; one whose `beat_at` is older than the staleness bound is
-- dead, and the jobs it held (`running_jobs`, pg-boss job ids) are handed to another worker.
-- Both times are the database's `now()`: liveness is infrastructure, measured in real time on
-- one clock that every instance shares, never a family's (test) clock.
--
-- No index beyond the key: the table holds one row per running process, plus dead ones for an
-- hour (the reaper deletes them), and "is X alive" reads one row by key.
create table instance_heartbeats (
  instance_id text primary key,
  started_at timestamptz not null,
  beat_at timestamptz not null,
  running_jobs uuid[] not null default '{}'
);
