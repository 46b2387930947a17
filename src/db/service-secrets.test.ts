import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/database.js';
import { loadServiceSecret } from './service-secrets.js';

describe('service secrets', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('are generated once and read back byte for byte, even when two callers race', async () => {
    const [a, b] = await Promise.all([
      loadServiceSecret(database.handle.db, 'race'),
      loadServiceSecret(database.handle.db, 'race'),
    ]);
    expect(a).toHaveLength(32);
    expect(a.equals(b)).toBe(true);
    expect((await loadServiceSecret(database.handle.db, 'race')).equals(a)).toBe(true);
  });

  it('differ by name and honour the requested length', async () => {
    const a = await loadServiceSecret(database.handle.db, 'one', 48);
    const b = await loadServiceSecret(database.handle.db, 'two', 48);
    expect(a).toHaveLength(48);
    expect(a.equals(b)).toBe(false);
  });
});
