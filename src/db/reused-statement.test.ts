import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/database.js';
import { reusedStatement } from './reused-statement.js';

describe('reused statements', () => {
  let database: TestDatabase;
  const statements: string[] = [];
  beforeAll(async () => {
    database = await createTestDatabase({ onStatement: (text) => statements.push(text) });
    const now = new Date('2026-01-01T00:00:00Z');
    await database.handle.db
      .insertInto('families')
      .values(
        [
          ['Alpha', 'test'],
          ['Alpha', 'live'],
          ['Beta', 'test'],
        ].map(([name, environment]) => ({
          id: randomUUID(),
          org_id: null,
          environment: environment as 'test' | 'live',
          name: name as string,
          created_at: now,
          updated_at: now,
        })),
      )
      .execute();
  });
  afterAll(() => database.drop());

  // The name is a value, the environment a constant of the query.
  const testFamiliesNamed = reusedStatement(['name'], (db, { name }) =>
    db
      .selectFrom('families')
      .select(['name', 'environment'])
      .where('name', '=', name)
      .where('environment', '=', 'test'),
  );

  it('runs the builder’s statement with each call’s values, constants kept', async () => {
    const db = database.handle.db;
    const test = 'test';
    expect(await testFamiliesNamed.execute(db, { name: 'Alpha' })).toEqual([
      { name: 'Alpha', environment: test },
    ]);
    expect(await testFamiliesNamed.execute(db, { name: 'Beta' })).toEqual([
      { name: 'Beta', environment: test },
    ]);
    expect(await testFamiliesNamed.execute(db, { name: 'Gamma' })).toEqual([]);

    const built = db
      .selectFrom('families')
      .select(['name', 'environment'])
      .where('name', '=', 'Beta')
      .where('environment', '=', 'test')
      .compile();
    const reused = testFamiliesNamed.compile(db, { name: 'Beta' });
    expect(reused.sql).toBe(built.sql);
    expect(reused.parameters).toEqual(built.parameters);
    // What ran is that text, once per call.
    expect(statements.filter((text) => text === built.sql)).toHaveLength(3);
  });

  it('binds a value that looks like a marker as the value it is', async () => {
    const lookalike = reusedStatement(['name'], (db, { name }) =>
      db.selectFrom('families').select('name').where('name', '=', name),
    );
    const db = database.handle.db;
    const marker = lookalike.compile(db, { name: '\u0000haven-value-a:name' });
    expect(marker.parameters).toEqual(['\u0000haven-value-a:name']);
    expect(await lookalike.execute(db, { name: 'haven-value-a:name' })).toEqual([]);
    expect(await lookalike.execute(db, { name: 'Beta' })).toEqual([{ name: 'Beta' }]);
  });

  it('refuses a builder that transforms a value or writes it into the text', () => {
    const db = database.handle.db;
    const transformed = reusedStatement(['name'], (db, { name }) =>
      db.selectFrom('families').select('id').where('name', '=', name.toUpperCase()),
    );
    expect(() => transformed.compile(db, { name: 'Alpha' })).toThrow(/transformed/);
    const inlined = reusedStatement(['name'], (db, { name }) =>
      db
        .selectFrom('families')
        .select('id')
        .where(sql<boolean>`name = ${sql.lit(name)}`),
    );
    expect(() => inlined.compile(db, { name: 'Alpha' })).toThrow(/statement text/);
  });
});
