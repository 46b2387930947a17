// How many statements a quick setup sends (docs/decisions.md "Quick setup": a new family is one
// statement). A count, never a time: each statement is a round trip to the database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { createTestDatabase } from '../../../test/database.js';
import { longSession, type Session } from '../../../test/identity.js';

describe('quick setup round trips', () => {
  let t: TestApp;
  let owner: Session;
  /**
   * Statements seen while a counted request runs (workers are off: nothing else runs but the
   * process's heartbeat, every few seconds, which is not the request's).
   */
  let statements: string[] | undefined;
  beforeAll(async () => {
    const database = await createTestDatabase({
      onStatement: (text) => {
        if (!text.includes('instance_heartbeats')) {
          statements?.push(text.replace(/\s+/g, ' '));
        }
      },
    });
    t = await buildTestApp({ database, env: { WORKERS: 'off' } });
    owner = await longSession(t);
    // The session's first use reads it; the counted calls run with it cached.
    await setup({ child_name: 'Warm', birth_date: '2015-01-10' });
  });
  afterAll(async () => {
    await t.close();
    await t.database.drop();
  });

  async function setup(payload: object) {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/setup/quick',
      headers: owner.auth,
      payload,
    });
    expect(res.statusCode).toBe(201);
    return res.json();
  }

  const fromBegin = (seen: string[]) => seen.slice(seen.indexOf('begin'));

  async function counted(payload: object) {
    statements = [];
    const body = await setup(payload);
    const seen = statements;
    statements = undefined;
    return { body, seen };
  }

  it('a new family: one statement writes its 24 rows and its audit chain with the entry, and its events read nothing (it can have no webhooks or connections yet)', async () => {
    const { body, seen } = await counted({ child_name: 'Leo', birth_date: '2015-01-10' });
    expect(body.rules).toHaveLength(20);
    expect(seen).toEqual([expect.stringMatching(/^with w0 as \(insert into "families"/)]);
    expect(seen[0]).toMatch(/insert into "audit_chains".*insert into "audit_entries"/);
  });

  it('an existing family: the check, then lock, find and one write in a transaction', async () => {
    const first = await setup({ child_name: 'Ada', birth_date: '2014-03-03' });
    const sibling = await counted({
      child_name: 'Bo',
      birth_date: '2016-04-04',
      family_id: first.family.id,
    });
    expect(sibling.body.rules).toHaveLength(20);
    // After the visibility check (the family, the caller's membership): one transaction,
    // which the events' readers (webhooks, connections) and the audit entry (the chain's
    // next seq and the entry, in one statement) join before the commit.
    expect(fromBegin(sibling.seen)).toEqual([
      'begin',
      expect.stringMatching(/^select pg_advisory_xact_lock/),
      expect.stringMatching(/^select .* from \(select \* from "children"/),
      expect.stringMatching(/^with w0 as \(insert into "children"/),
      expect.stringMatching(/^select .* from "webhooks"/),
      expect.stringMatching(/^select .* from "family_connections"/),
      expect.stringMatching(
        /^\s*with facts as .* update audit_chains .* insert into audit_entries/,
      ),
      'commit',
    ]);
    // Repeating it finds everything and writes nothing (and so announces and logs nothing).
    const again = await counted({
      child_name: 'Bo',
      birth_date: '2016-04-04',
      family_id: first.family.id,
    });
    expect(again.body).toEqual(sibling.body);
    expect(fromBegin(again.seen)).toEqual([
      'begin',
      expect.stringMatching(/^select pg_advisory_xact_lock/),
      expect.stringMatching(/^select .* from \(select \* from "children"/),
      'commit',
    ]);
  });
});
