import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { Type } from 'typebox';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../test/app.js';
import { createTestDatabase } from '../../test/database.js';
import { injectFailure } from '../../test/injected-failure.js';
import type { Db } from '../db/connect.js';
import { ConflictError } from './errors.js';
import { IN_FLIGHT_LEASE_MS, RECEIPT_TTL_MS } from './idempotency.js';

/**
 * A small real write route of this test's own: it inserts a row into a table the test
 * creates, so "executed once" is counted in the database, not in memory.
 */
interface Control {
  /** Holds the next request inside the handler until resolved. */
  gate?: Promise<void>;
  entered?: () => void;
  failNext: number;
}

function widgetRoutes(db: Db, control: Control) {
  return async (root: FastifyInstance) => {
    const app = root.withTypeProvider<TypeBoxTypeProvider>();
    app.post(
      '/api/v1/probe/widgets',
      {
        schema: {
          operationId: 'probeCreateWidget',
          summary: 'probe',
          tags: ['Probe'],
          body: Type.Object({ name: Type.String({ maxLength: 50 }) }),
        },
      },
      async (request, reply) => {
        if (control.gate) {
          const gate = control.gate;
          control.gate = undefined;
          control.entered?.();
          await gate;
        }
        if (control.failNext > 0) {
          control.failNext--;
          throw new Error('transient failure');
        }
        if (request.body.name === 'taken') {
          throw new ConflictError('widget name taken');
        }
        const row = await sql<{ id: number; name: string }>`
          insert into probe_widgets (name) values (${request.body.name}) returning id, name
        `.execute(db);
        return reply.code(201).send(row.rows[0]);
      },
    );
    app.delete(
      '/api/v1/probe/widgets/:id',
      {
        schema: {
          operationId: 'probeDeleteWidget',
          summary: 'probe',
          tags: ['Probe'],
          params: Type.Object({ id: Type.String() }),
        },
      },
      async (_request, reply) => reply.code(204).send(),
    );
  };
}

describe('Idempotency-Key', () => {
  let t: TestApp;
  const control: Control = { failNext: 0 };

  const create = (key: string | undefined, name: string, extra: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url: '/api/v1/probe/widgets',
      headers: {
        'content-type': 'application/json',
        ...(key === undefined ? {} : { 'idempotency-key': key }),
        ...extra,
      },
      payload: JSON.stringify({ name }),
    });

  const count = async () =>
    Number(
      (
        await sql<{ n: number }>`select count(*)::int as n from probe_widgets`.execute(
          t.database.handle.db,
        )
      ).rows[0]?.n,
    );

  beforeAll(async () => {
    const database = await createTestDatabase();
    await sql`create table probe_widgets (id serial primary key, name text not null)`.execute(
      database.handle.db,
    );
    t = await buildTestApp({ database, plugins: [widgetRoutes(database.handle.db, control)] });
  });
  afterAll(async () => {
    await t.close();
    await t.database.drop();
  });
  beforeEach(async () => {
    control.failNext = 0;
    control.gate = undefined;
    await sql`truncate probe_widgets`.execute(t.database.handle.db);
  });

  it('replays the original body with 200 and OCSS-Replay: original, executing once', async () => {
    const first = await create('key-1', 'alpha');
    expect(first.statusCode).toBe(201);
    expect(first.headers['ocss-replay']).toBeUndefined();

    const again = await create('key-1', 'alpha');
    expect(again.statusCode).toBe(200);
    expect(again.headers['ocss-replay']).toBe('original');
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    expect(again.body).toBe(first.body);
    expect(await count()).toBe(1);
  });

  it('answers 409 when the key is reused with a different body', async () => {
    await create('key-2', 'alpha');
    const other = await create('key-2', 'beta');
    expect(other.statusCode).toBe(409);
    expect(other.json()).toMatchObject({ error: 'Conflict', code: 409 });
    expect(await count()).toBe(1);
  });

  it('treats a body that differs by one byte as different', async () => {
    await create('key-3', 'alpha');
    const spaced = await t.app.inject({
      method: 'POST',
      url: '/api/v1/probe/widgets',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'key-3' },
      payload: '{"name": "alpha"}',
    });
    expect(spaced.statusCode).toBe(409);
  });

  it('answers 409 while the first request is still in flight', async () => {
    let open: () => void = () => {};
    control.gate = new Promise((resolve) => {
      open = resolve;
    });
    const entered = new Promise<void>((resolve) => {
      control.entered = resolve;
    });
    const first = create('key-4', 'alpha');
    await entered; // the first request holds its claim and waits inside the handler
    const second = await create('key-4', 'alpha');
    expect(second.statusCode).toBe(409);
    expect(second.json().message).toBe('a request with this Idempotency-Key is still in progress');
    open();
    expect((await first).statusCode).toBe(201);
    expect((await create('key-4', 'alpha')).statusCode).toBe(200);
    expect(await count()).toBe(1);
  });

  it('does not store 5xx or 4xx results: the retry runs again', async () => {
    control.failNext = 1;
    const failed = await create('key-5', 'alpha');
    expect(failed.statusCode).toBe(500);
    const retried = await create('key-5', 'alpha');
    expect(retried.statusCode).toBe(201);
    expect(await count()).toBe(1);

    const taken = await create('key-6', 'taken');
    expect(taken.statusCode).toBe(409);
    const takenAgain = await create('key-6', 'taken');
    expect(takenAgain.statusCode).toBe(409);
    expect(takenAgain.headers['ocss-replay']).toBeUndefined();
  });

  it('keeps receipts 24 hours, then runs the request again', async () => {
    await create('key-7', 'alpha');
    t.clock.advance(RECEIPT_TTL_MS - 1_000);
    expect((await create('key-7', 'alpha')).statusCode).toBe(200);
    t.clock.advance(2_000);
    expect((await create('key-7', 'alpha')).statusCode).toBe(201);
    expect(await count()).toBe(2);
  });

  it('takes over a claim whose request died (lease ran out)', async () => {
    const now = t.clock.now();
    await t.database.handle.db
      .insertInto('idempotency_keys')
      .values({
        caller: 'anonymous:default',
        method: 'POST',
        path: '/api/v1/probe/widgets',
        key: 'key-8',
        fingerprint: 'from-a-dead-process',
        state: 'in_flight',
        created_at: now,
        locked_until: new Date(now.getTime() + IN_FLIGHT_LEASE_MS),
        expires_at: new Date(now.getTime() + RECEIPT_TTL_MS),
      })
      .execute();
    expect((await create('key-8', 'alpha')).statusCode).toBe(409);
    t.clock.advance(IN_FLIGHT_LEASE_MS + 1);
    expect((await create('key-8', 'alpha')).statusCode).toBe(201);
  });

  it('keys receipts by caller: another sandbox session does not see my receipt', async () => {
    await create('key-9', 'alpha', { 'x-sandbox-session': 'alice' });
    const bob = await create('key-9', 'alpha', { 'x-sandbox-session': 'bob' });
    expect(bob.statusCode).toBe(201);
    expect(await count()).toBe(2);
  });

  it('rejects a malformed key and leaves requests without one alone', async () => {
    const long = await create('k'.repeat(256), 'alpha');
    expect(long.statusCode).toBe(400);
    expect(long.json().message).toBe('Idempotency-Key must be 1-255 printable characters');
    expect((await create(undefined, 'alpha')).statusCode).toBe(201);
    expect((await create(undefined, 'alpha')).statusCode).toBe(201);
    expect(await count()).toBe(2);
  });

  it('replays a 204 delete as 200 with an empty body', async () => {
    const del = (key: string) =>
      t.app.inject({
        method: 'DELETE',
        url: '/api/v1/probe/widgets/9',
        headers: { 'idempotency-key': key },
      });
    expect((await del('key-10')).statusCode).toBe(204);
    const replay = await del('key-10');
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['ocss-replay']).toBe('original');
    expect(replay.body).toBe('');
  });

  it('survives a restart: a new app on the same database replays the receipt', async () => {
    const first = await create('key-11', 'alpha');
    const restarted = await buildTestApp({
      database: t.database,
      clock: t.clock,
      plugins: [widgetRoutes(t.database.handle.db, control)],
    });
    try {
      const replay = await restarted.app.inject({
        method: 'POST',
        url: '/api/v1/probe/widgets',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'key-11' },
        payload: JSON.stringify({ name: 'alpha' }),
      });
      expect(replay.statusCode).toBe(200);
      expect(replay.body).toBe(first.body);
    } finally {
      await restarted.app.close();
    }
    expect(await count()).toBe(1);
  });

  it('commits a write with its answer: a crash between them leaves neither, and the retry writes once', async () => {
    // The step after the write (recording its answer) fails, as a process killed there would
    // never take it. Injected in the database, where the answer is written.
    const restore = await injectFailure(t.database.handle.db, {
      name: 'probe_crash_on_answer',
      on: 'update',
      table: 'idempotency_keys',
      when: "new.key = 'key-12' and new.state = 'completed'",
    });
    try {
      const crashed = await create('key-12', 'alpha');
      expect(crashed.statusCode).toBe(500);
      expect(await count()).toBe(0);
    } finally {
      await restore();
    }
    const retried = await create('key-12', 'alpha');
    expect(retried.statusCode).toBe(201);
    expect((await create('key-12', 'alpha')).statusCode).toBe(200);
    expect(await count()).toBe(1);
  });

  it('takes over at once a claim whose instance stopped beating; a beating one keeps its claim', async () => {
    const db = t.database.handle.db;
    const now = t.clock.now();
    const claimBy = (key: string, instance: string) =>
      db
        .insertInto('idempotency_keys')
        .values({
          caller: 'anonymous:default',
          method: 'POST',
          path: '/api/v1/probe/widgets',
          key,
          fingerprint: 'from-another-process',
          state: 'in_flight',
          created_at: now,
          locked_until: new Date(now.getTime() + IN_FLIGHT_LEASE_MS),
          expires_at: new Date(now.getTime() + RECEIPT_TTL_MS),
          claim_token: 'their-token',
          claimed_by: instance,
        })
        .execute();
    await sql`
      insert into instance_heartbeats (instance_id, started_at, beat_at)
      values ('probe-dead', now() - interval '1 hour', now() - interval '1 hour'),
             ('probe-alive', now() - interval '1 hour', now())`.execute(db);
    await claimBy('key-13', 'probe-dead');
    await claimBy('key-14', 'probe-alive');
    expect((await create('key-13', 'alpha')).statusCode).toBe(201);
    expect((await create('key-14', 'alpha')).statusCode).toBe(409);
    expect(await count()).toBe(1);
  });

  it('rolls back an attempt whose claim was taken over, and answers with the attempt that took it', async () => {
    let open: () => void = () => {};
    control.gate = new Promise((resolve) => {
      open = resolve;
    });
    const entered = new Promise<void>((resolve) => {
      control.entered = resolve;
    });
    const first = create('key-15', 'alpha');
    await entered;
    // Another attempt took the claim over (this one looked dead) and answered.
    await t.database.handle.db
      .updateTable('idempotency_keys')
      .set({
        claim_token: 'the-other-attempt',
        state: 'completed',
        response_status: 201,
        response_body: '{"id":1,"name":"alpha"}',
        response_content_type: 'application/json; charset=utf-8',
      })
      .where('key', '=', 'key-15')
      .execute();
    open();
    const answer = await first;
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['ocss-replay']).toBe('original');
    expect(answer.body).toBe('{"id":1,"name":"alpha"}');
    expect(await count()).toBe(0);
  });
});
