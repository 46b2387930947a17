// Table types for Kysely. One interface per table; migrations/ is the source of truth.
import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string, Date | string>;

export interface IdempotencyKeyTable {
  caller: string;
  method: string;
  path: string;
  key: string;
  fingerprint: string;
  state: 'in_flight' | 'completed';
  response_status: number | null;
  response_body: string | null;
  response_content_type: string | null;
  /** Headers naming what the write made (REPLAYED_HEADERS in http/idempotency.ts). */
  response_headers: Record<string, string> | null;
  created_at: Timestamp;
  locked_until: Timestamp;
  expires_at: Timestamp;
  claim_token: string | null;
  claimed_by: string | null;
}

/** One row per process with a job queue (src/jobs/liveness.ts); times are the database's. */
export interface InstanceHeartbeatTable {
  instance_id: string;
  started_at: Timestamp;
  beat_at: Timestamp;
  /** pg-boss ids of the jobs the instance was running at its last beat. */
  running_jobs: Generated<string[]>;
}

export interface SchemaMigrationTable {
  version: string;
  name: string;
  applied_at: Generated<Timestamp>;
}

export interface Database {
  idempotency_keys: IdempotencyKeyTable;
  instance_heartbeats: InstanceHeartbeatTable;
  schema_migrations: SchemaMigrationTable;
}
