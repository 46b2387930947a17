// Secrets the service generates once and keeps in its own database, shared by every process
// that uses the same storage (so a code minted by one instance redeems on another).
import { randomBytes } from 'node:crypto';
import type { Db } from './connect.js';

declare module './schema.js' {
  interface Database {
    service_secrets: ServiceSecretTable;
  }
}

export interface ServiceSecretTable {
  name: string;
  value: Buffer;
  created_at: Date;
}

/**
 * The secret called `name`, made on first use: `bytes` random bytes, or what `generate`
 * returns (a private key, say). Two processes racing both insert; the conflict keeps the
 * first and both read it back.
 */
export async function loadServiceSecret(
  db: Db,
  name: string,
  make: number | (() => Buffer) = 32,
): Promise<Buffer> {
  const value = typeof make === 'number' ? randomBytes(make) : make();
  await db
    .insertInto('service_secrets')
    .values({ name, value, created_at: new Date() })
    .onConflict((conflict) => conflict.column('name').doNothing())
    .execute();
  const row = await db
    .selectFrom('service_secrets')
    .select('value')
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  return Buffer.from(row.value);
}

/** The secret called `name` if it was ever made (nothing is made here). */
export async function findServiceSecret(db: Db, name: string): Promise<Buffer | undefined> {
  const row = await db
    .selectFrom('service_secrets')
    .select('value')
    .where('name', '=', name)
    .executeTakeFirst();
  return row ? Buffer.from(row.value) : undefined;
}
