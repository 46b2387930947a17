// Two instances on one PostgreSQL and one Redis: a key revoked through one is refused by
// the other, whose cache held it as valid a moment before.
import { describe, expect, it } from 'vitest';
import { buildTestApp } from '../../../test/app.js';
import { TestClock } from '../../../test/clock.js';
import { createTestDatabase } from '../../../test/database.js';
import { bearer, createOrg, mintKey, newSession } from '../../../test/identity.js';
import { eventually } from '../../../test/tcp-proxy.js';

const shared = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);

describe.runIf(shared)('key revocation across instances (Redis)', () => {
  it('reaches the other instance without waiting for its cache to expire', async () => {
    const database = await createTestDatabase();
    const secondHandle = database.reopen?.();
    if (!secondHandle) {
      throw new Error('PostgreSQL test databases can be reopened');
    }
    const clock = new TestClock();
    const env = { REDIS_URL: process.env.REDIS_URL ?? '' };
    const a = await buildTestApp({ database, clock, env });
    const b = await buildTestApp({ database: { ...database, handle: secondHandle }, clock, env });
    try {
      const owner = await newSession(a.app);
      const org = await createOrg(a.app, owner);
      const key = await mintKey(a.app, owner, org.id);
      const onB = () =>
        b.app.inject({ url: '/api/v1/developer/families', headers: bearer(key.key) });
      expect((await onB()).statusCode).toBe(200); // B now caches the key as valid

      const revoke = await a.app.inject({
        method: 'DELETE',
        url: `/api/v1/developers/orgs/${org.id}/keys/${key.id}`,
        headers: owner.auth,
      });
      expect(revoke.statusCode).toBe(204);
      // The clock does not move: B's 60 s cache TTL cannot be what drops the key.
      await eventually(async () => (await onB()).statusCode === 401, 'B to refuse the key', 2_000);
      expect((await onB()).json().message).toBe('API key has been revoked');
    } finally {
      await a.app.close();
      await b.app.close();
      await secondHandle.close();
      await database.drop();
    }
  });
});
