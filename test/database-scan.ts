// Where a value is stored anywhere in the database: every column that can hold it (text,
// json, jsonb, uuid, bytea) of every table of every schema (Haven's and the job queue's), so a
// test can show that something erased or sealed away is stored nowhere else.
import { sql } from 'kysely';
import type { Db } from '../src/db/connect.js';

export interface Found {
  table: string;
  column: string;
  rows: number;
}

interface Column {
  schema: string;
  table: string;
  column: string;
  type: string;
}

const TEXTUAL = ['text', 'character varying', 'character', 'json', 'jsonb', 'uuid'];

async function columnsOf(db: Db): Promise<Column[]> {
  const result = await sql<Column>`
    select c.table_schema as schema, c.table_name as table, c.column_name as column,
      c.data_type as type
    from information_schema.columns c
    join information_schema.tables t
      on t.table_schema = c.table_schema and t.table_name = c.table_name
    where t.table_type = 'BASE TABLE'
      and c.table_schema not in ('pg_catalog', 'information_schema')
      and c.data_type in ('text', 'character varying', 'character', 'json', 'jsonb', 'uuid', 'bytea')
    order by 1, 2, 3`.execute(db);
  return result.rows;
}

/**
 * Every (table, column) holding any of `texts` (as a substring of its text form, or of a
 * bytea's bytes) or any of `bytes` (inside a bytea, or as hex or base64 in text), with how
 * many rows do. Empty: stored nowhere.
 */
export async function findStored(
  db: Db,
  needles: { texts?: readonly string[]; bytes?: readonly Buffer[] },
): Promise<Found[]> {
  const texts = [
    ...(needles.texts ?? []),
    ...(needles.bytes ?? []).flatMap((b) => [b.toString('hex'), b.toString('base64')]),
  ];
  const bytes = [
    ...(needles.bytes ?? []),
    ...(needles.texts ?? []).map((text) => Buffer.from(text, 'utf8')),
  ];
  const found: Found[] = [];
  for (const { schema, table, column, type } of await columnsOf(db)) {
    const ref = sql.ref(`${schema}.${table}.${column}`);
    const conditions = TEXTUAL.includes(type)
      ? texts.map((text) => sql<boolean>`strpos(${ref}::text, ${text}) > 0`)
      : bytes.map((needle) => sql<boolean>`position(${needle} in ${ref}) > 0`);
    if (conditions.length === 0) {
      continue;
    }
    const result = await sql<{ n: number | string }>`
      select count(*) as n from ${sql.table(`${schema}.${table}`)}
      where ${sql.join(conditions, sql` or `)}`.execute(db);
    const rows = Number(result.rows[0]?.n ?? 0);
    if (rows > 0) {
      found.push({ table: `${schema}.${table}`, column, rows });
    }
  }
  return found;
}
