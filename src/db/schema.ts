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
  created_at: Timestamp;
  locked_until: Timestamp;
  expires_at: Timestamp;
}

export interface SchemaMigrationTable {
  version: string;
  name: string;
  applied_at: Generated<Timestamp>;
}

export interface Database {
  idempotency_keys: IdempotencyKeyTable;
  schema_migrations: SchemaMigrationTable;
}
