// Two instances on one PostgreSQL and one Redis: a key revoked through one is refused by
// the other, whose cache held it as valid a moment before.
import { describe, expect, it } from 'vitest';
import { TestClock } from '../../../test/clock.js';
import { bearer, createOrg, mintKey, newSession } from '../../../test/identity.js';
import { withTwoInstances } from '../../../test/instances.js';
import { eventually } from '../../../test/tcp-proxy.js';

const shared = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);

describe.runIf(shared)('key revocation across instances (Redis)', () => {
  it('reaches the other instance without waiting for its cache to expire', async () => {
    const env = { REDIS_URL: process.env.REDIS_URL ?? '' };
    await withTwoInstances({ clock: new TestClock(), env }, async (a, b) => {
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
    });
  });
});
