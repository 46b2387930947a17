// SQL of webhooks and their delivery attempts. The sealed secret is selected only by the one
// function that hands it to the delivery worker; every listing leaves it out.
import { type ColumnType, type Selectable, sql } from 'kysely';
import type { Db } from '../../db/connect.js';
import { reusedStatement } from '../../db/reused-statement.js';
import {
  type FamilyTenant,
  familyAnchor,
  familyFacts,
  NEWEST_FIRST,
  withRows,
} from '../families/store.js';

declare module '../../db/schema.js' {
  interface Database {
    webhooks: WebhookTable;
    webhook_deliveries: WebhookDeliveryTable;
  }
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface WebhookTable {
  id: string;
  family_id: string;
  url: string;
  /** jsonb: read back parsed, written as JSON text. `["*"]` means every event type. */
  events: ColumnType<string[], string, string>;
  secret: Buffer;
  secret_key_id: string;
  active: boolean;
  failing_since: Date | null;
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface WebhookDeliveryTable {
  id: string;
  seq: ColumnType<string, never, never>;
  webhook_id: string;
  message_id: string;
  event: string;
  payload: string;
  status: DeliveryStatus;
  response_code: number | null;
  error: string | null;
  attempt: number;
  next_retry_at: Date | null;
  created_at: Date;
  attempted_at: Date | null;
}

export type WebhookRow = Omit<Selectable<WebhookTable>, 'secret' | 'secret_key_id'>;
export type DeliveryRow = Omit<Selectable<WebhookDeliveryTable>, 'seq'>;
export type NewWebhook = Omit<WebhookTable, 'events'> & { events: string[] };

const PUBLIC_COLUMNS = [
  'id',
  'family_id',
  'url',
  'events',
  'active',
  'failing_since',
  'disabled_reason',
  'created_at',
  'updated_at',
] as const;

const DELIVERY_COLUMNS = [
  'id',
  'webhook_id',
  'message_id',
  'event',
  'payload',
  'status',
  'response_code',
  'error',
  'attempt',
  'next_retry_at',
  'created_at',
  'attempted_at',
] as const;

export async function insertWebhook(db: Db, webhook: NewWebhook): Promise<void> {
  await db
    .insertInto('webhooks')
    .values({ ...webhook, events: JSON.stringify(webhook.events) })
    .execute();
}

export async function findWebhook(db: Db, id: string): Promise<WebhookRow | undefined> {
  return db.selectFrom('webhooks').select(PUBLIC_COLUMNS).where('id', '=', id).executeTakeFirst();
}

/** A webhook with its family's facts for `tenant` (no row: no such webhook). */
export async function findWebhookRead(db: Db, id: string, tenant: FamilyTenant) {
  return webhookAnchor(db, id, tenant)
    .select(PUBLIC_COLUMNS.map((column) => `w.${column}` as const))
    .executeTakeFirst();
}

function webhookAnchor(db: Db, id: string, tenant: FamilyTenant) {
  return db
    .selectFrom('webhooks as w')
    .innerJoin('families as f', 'f.id', 'w.family_id')
    .select(familyFacts(tenant))
    .where('w.id', '=', id);
}

/** One family's webhooks, newest first, with the family's facts: one statement. */
export async function listFamilyWebhooksRead(db: Db, familyId: string, tenant: FamilyTenant) {
  return withRows(
    db,
    familyAnchor(db, familyId, tenant),
    db.selectFrom('webhooks').select(PUBLIC_COLUMNS).where('family_id', '=', familyId),
    NEWEST_FIRST,
  ).execute();
}

/**
 * A webhook's latest deliveries, newest first, with its family's facts: one statement
 * (`seq` rides along to order them; the caller drops it).
 */
export async function listDeliveriesRead(
  db: Db,
  webhookId: string,
  tenant: FamilyTenant,
  limit: number,
) {
  return withRows(
    db,
    webhookAnchor(db, webhookId, tenant),
    db
      .selectFrom('webhook_deliveries')
      .select([...DELIVERY_COLUMNS, 'seq'])
      .where('webhook_id', '=', webhookId)
      .orderBy('created_at', 'desc')
      .orderBy('seq', 'desc')
      .limit(limit),
    [
      ['created_at', 'desc'],
      ['seq', 'desc'],
    ],
  ).execute();
}

export async function listWebhooks(db: Db, familyIds: readonly string[]): Promise<WebhookRow[]> {
  if (familyIds.length === 0) {
    return [];
  }
  return db
    .selectFrom('webhooks')
    .select(PUBLIC_COLUMNS)
    .where('family_id', 'in', familyIds)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/**
 * Every event any write publishes reads its subscribers, so the statement is compiled once
 * (db/reused-statement), with the batch's event types as one JSON array: `?|` is true when
 * the `events` array holds any of them, or `*`, as an element.
 */
const subscribersOf = reusedStatement(['familyId', 'eventTypes'], (db, values) =>
  db
    .selectFrom('webhooks')
    .select(PUBLIC_COLUMNS)
    .where('family_id', '=', values.familyId)
    .where('active', '=', true)
    .where(
      sql<boolean>`events ?| array(select jsonb_array_elements_text(${values.eventTypes}::jsonb))`,
    )
    .orderBy('created_at'),
);

/** Active webhooks of the family subscribed to any of the event types (or to every event). */
export async function listSubscribers(
  db: Db,
  familyId: string,
  eventTypes: readonly string[],
): Promise<WebhookRow[]> {
  return subscribersOf.execute(db, {
    familyId,
    eventTypes: JSON.stringify([...eventTypes, '*']),
  });
}

export async function updateWebhook(
  db: Db,
  id: string,
  changes: {
    url?: string;
    events?: string[];
    active?: boolean;
    failing_since?: Date | null;
    disabled_reason?: string | null;
    updated_at: Date;
  },
): Promise<WebhookRow> {
  const { events, ...rest } = changes;
  return db
    .updateTable('webhooks')
    .set({ ...rest, ...(events ? { events: JSON.stringify(events) } : {}) })
    .where('id', '=', id)
    .returning(PUBLIC_COLUMNS)
    .executeTakeFirstOrThrow();
}

/** Whether there was a row to delete (a concurrent delete may have taken it first). */
export async function deleteWebhook(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('webhooks').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function findSealedSecret(
  db: Db,
  id: string,
): Promise<{ secret: Buffer; secret_key_id: string } | undefined> {
  const row = await db
    .selectFrom('webhooks')
    .select(['secret', 'secret_key_id'])
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? { secret: Buffer.from(row.secret), secret_key_id: row.secret_key_id } : undefined;
}

/**
 * A failure of the endpoint: the run of failures starts now unless one is already running.
 * Answers when the run started (one statement, so concurrent workers agree on it), or
 * undefined when the webhook was deleted meanwhile.
 */
export async function markFailing(db: Db, id: string, now: Date): Promise<Date | undefined> {
  const row = await db
    .updateTable('webhooks')
    .set({ failing_since: sql<Date>`coalesce(failing_since, ${now})` })
    .where('id', '=', id)
    .returning('failing_since')
    .executeTakeFirst();
  return row ? (row.failing_since ?? now) : undefined;
}

export async function markHealthy(db: Db, id: string): Promise<void> {
  await db
    .updateTable('webhooks')
    .set({ failing_since: null })
    .where('id', '=', id)
    .where('failing_since', 'is not', null)
    .execute();
}

export async function insertDelivery(db: Db, delivery: DeliveryRow): Promise<void> {
  await db.insertInto('webhook_deliveries').values(delivery).execute();
}

export async function findDelivery(db: Db, id: string): Promise<DeliveryRow | undefined> {
  return db
    .selectFrom('webhook_deliveries')
    .select(DELIVERY_COLUMNS)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The highest attempt number of a message so far. */
export async function lastAttemptOf(db: Db, webhookId: string, messageId: string): Promise<number> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.max('attempt').as('attempt'))
    .where('webhook_id', '=', webhookId)
    .where('message_id', '=', messageId)
    .executeTakeFirst();
  return row?.attempt ?? 0;
}

/**
 * Records how an attempt ended, only if it is still pending (a manual retry may have closed
 * it meanwhile). Answers whether this call recorded it.
 */
export async function finishDelivery(
  db: Db,
  id: string,
  outcome: Pick<
    DeliveryRow,
    'status' | 'response_code' | 'error' | 'attempted_at' | 'next_retry_at'
  >,
): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set(outcome)
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Closes the still-pending attempts of a message (a manual retry replaces them). */
export async function supersedePending(
  db: Db,
  webhookId: string,
  messageId: string,
  reason: string,
): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', error: reason, next_retry_at: null })
    .where('webhook_id', '=', webhookId)
    .where('message_id', '=', messageId)
    .where('status', '=', 'pending')
    .execute();
}
