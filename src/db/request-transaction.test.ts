// The request transaction (docs/decisions.md "A write and its answer commit together"): a
// keyed write's statements, through the ordinary database handle, run in one transaction that
// commits with the answer; transactions inside it are savepoints, side by side too.
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../test/app.js';
import { createTestDatabase } from '../../test/database.js';
import type { Db } from './connect.js';

const count = async (db: Db) =>
  Number(
    (await sql<{ n: number }>`select count(*)::int as n from probe_notes`.execute(db)).rows[0]?.n,
  );

function noteRoutes(db: Db) {
  return async (app: FastifyInstance) => {
    // Two transactions side by side, a third that fails, then a read of what the request
    // wrote; `fail` turns the answer into an error after the writes.
    const schema = { operationId: 'probeWriteNotes', summary: 'probe', tags: ['Probe'] };
    app.post<{ Querystring: { fail?: string } }>(
      '/api/v1/probe/notes',
      { schema },
      async (request, reply) => {
        const write = (text: string) =>
          db.transaction().execute(async (trx) => {
            await trx
              .insertInto('probe_notes' as never)
              .values({ text } as never)
              .execute();
          });
        await Promise.all([
          write('a'),
          write('b'),
          db
            .transaction()
            .execute(async (trx) => {
              await trx
                .insertInto('probe_notes' as never)
                .values({ text: 'undone' } as never)
                .execute();
              throw new Error('this one rolls back to its savepoint');
            })
            .catch(() => undefined),
        ]);
        const seen = await count(db);
        if (request.query.fail === 'yes') {
          return reply
            .code(422)
            .send({ error: 'Unprocessable', message: 'after writing', code: 422 });
        }
        return reply.code(201).send({ seen });
      },
    );
  };
}

describe('a request transaction', () => {
  let t: TestApp;
  const post = (key: string, query = '') =>
    t.app.inject({
      method: 'POST',
      url: `/api/v1/probe/notes${query}`,
      headers: { 'idempotency-key': key },
    });

  beforeAll(async () => {
    const database = await createTestDatabase();
    await sql`create table probe_notes (id serial primary key, text text not null)`.execute(
      database.handle.db,
    );
    t = await buildTestApp({ database, plugins: [noteRoutes(database.handle.db)] });
  });
  afterAll(async () => {
    await t.close();
    await t.database.drop();
  });
  beforeEach(async () => {
    await sql`truncate probe_notes`.execute(t.database.handle.db);
  });

  it('runs side-by-side transactions as savepoints, sees its own writes and commits them', async () => {
    const res = await post('notes-1');
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({ seen: 2 });
    const texts = await sql<{ text: string }>`select text from probe_notes order by text`.execute(
      t.database.handle.db,
    );
    expect(texts.rows.map((row) => row.text)).toEqual(['a', 'b']);
  });

  it('rolls back everything the request wrote when it answers with an error', async () => {
    const res = await post('notes-2', '?fail=yes');
    expect(res.statusCode).toBe(422);
    expect(await count(t.database.handle.db)).toBe(0);
  });

  it('leaves requests without a key to their own transactions', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/probe/notes?fail=yes' });
    expect(res.statusCode).toBe(422);
    expect(await count(t.database.handle.db)).toBe(2);
  });
});
