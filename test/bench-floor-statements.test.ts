// The statements the bench's comparators run are Haven's own (bench/children-read-sql.ts,
// bench/quick-setup-sql.ts): a floor that wrote something else would measure something else.
// Checked against what Haven sends on the real route, and run as the floor server runs them.
import { CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshIdWriter } from '../bench/fresh-ids.mjs';
import { quickSetupStatement } from '../bench/quick-setup-sql.js';
import { buildTestApp, type TestApp } from './app.js';
import { createTestDatabase } from './database.js';
import { bearer, createOrg, mintKey, newSession } from './identity.js';
import { type StatementRecorder, statementRecorder } from './statements.js';

describe("the embedded quick setup's floor statement", () => {
  let t: TestApp;
  let recorder: StatementRecorder;
  let orgId: string;
  let key: { authorization: string };

  beforeAll(async () => {
    recorder = statementRecorder();
    const database = await createTestDatabase({ onStatement: recorder.onStatement });
    t = await buildTestApp({ database, env: { WORKERS: 'off' }, plugins: [recorder.plugin] });
    const session = await newSession(t.app);
    orgId = (await createOrg(t.app, session)).id;
    key = bearer((await mintKey(t.app, session, orgId)).key);
  });
  afterAll(async () => {
    await t.close();
  });

  /** A list read with the key (the product plane's lists are arrays). */
  const list = async (path: string) => {
    const res = await t.app.inject({ url: `/api/v1/developer${path}`, headers: key });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Array<{ id: string; name: string }>;
  };
  const quickSetup = (childName: string, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url: '/api/v1/developer/setup/quick',
      headers: { ...key, ...headers },
      payload: { child_name: childName, birth_date: '2016-05-01' },
    });

  it("is the one statement Haven sends for a key's new family, text for text", async () => {
    // The key's first use reads it and its org; the bench's rows run with both cached.
    expect((await quickSetup('Warm')).statusCode).toBe(201);
    const { result, statements } = await recorder.during((headers) =>
      quickSetup('Bench Kid', headers),
    );
    expect(result.statusCode).toBe(201);
    const floor = await quickSetupStatement(orgId, 'Bench Kid', '2016-05-01');
    expect(statements).toEqual([floor.statement.sql]);
    // The family, the child, the policy, each of its 20 rules and the audit entry get an id
    // of their own.
    expect(floor.freshIds).toHaveLength(24);
    expect(new Set(floor.freshIds).size).toBe(24);
  });

  it("writes a whole setup into the key's org each time its created ids are replaced", async () => {
    const floor = await quickSetupStatement(orgId, 'Floor Kid', '2016-05-01');
    const withFreshIds = freshIdWriter(floor.statement.parameters, floor.freshIds);
    const before = (await list('/families')).length;
    for (let run = 0; run < 2; run++) {
      // What the floor server does per request (bench/embedded-write-server.mjs).
      const { parameters, newIds } = withFreshIds();
      await t.database.handle.db.executeQuery(CompiledQuery.raw(floor.statement.sql, parameters));
      const familyId = newIds.get(floor.freshIds[0] as string) as string;
      // Readable with the key: the org's id was kept, every created id was new.
      const [child] = await list(`/families/${familyId}/children`);
      expect(child?.name).toBe('Floor Kid');
      const [policy] = await list(`/children/${child?.id}/policies`);
      expect(await list(`/policies/${policy?.id}/rules`)).toHaveLength(20);
    }
    expect((await list('/families')).length).toBe(before + 2);
  });
});
