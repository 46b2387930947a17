// Two instances on one PostgreSQL and one Redis: a device revoked through one is refused by
// the other, whose key cache held it as valid a moment before.
import { describe, expect, it } from 'vitest';
import { TestClock } from '../../../test/clock.js';
import { withTwoInstances } from '../../../test/instances.js';
import { eventually } from '../../../test/tcp-proxy.js';

const shared = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);

describe.runIf(shared)('device revocation across instances (Redis)', () => {
  it('reaches the other instance without waiting for its cache to expire', async () => {
    const env = { REDIS_URL: process.env.REDIS_URL ?? '' };
    await withTwoInstances({ clock: new TestClock(), env }, async (a, b) => {
      const parent = { 'x-sandbox-session': 'shared-devices' };
      const setup = await a.app.inject({
        method: 'POST',
        url: '/api/v1/setup/quick',
        headers: parent,
        payload: { child_name: 'Noa', birth_date: '2017-09-09' },
      });
      expect(setup.statusCode).toBe(201);
      const registered = await a.app.inject({
        method: 'POST',
        url: `/api/v1/children/${setup.json().child.id}/devices`,
        headers: parent,
        payload: { device_name: 'phone' },
      });
      expect(registered.statusCode).toBe(201);
      const { device, device_key: key } = registered.json();
      const onB = () =>
        b.app.inject({ url: '/api/v1/device/policy', headers: { 'x-device-key': key } });
      expect((await onB()).statusCode).toBe(200); // B now caches the key as valid

      const revoke = await a.app.inject({
        method: 'DELETE',
        url: `/api/v1/devices/${device.id}`,
        headers: parent,
      });
      expect(revoke.statusCode).toBe(204);
      // The clock does not move: B's cache TTL cannot be what drops the key.
      await eventually(async () => (await onB()).statusCode === 401, 'B to refuse the key', 2_000);
      expect((await onB()).json().message).toBe('invalid or revoked device key');
    });
  });
});
