// Two instances on one PostgreSQL and one Redis: a device polling B, which remembers the
// policy in force, sees a change made through A on its next poll; with Redis cut off (a proxy
// the test controls), B's memory is stale for at most its TTL (the clock is moved by hand).
import { describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/app.js';
import { TestClock } from '../../../test/clock.js';
import { deviceAgent, quickSetup, registerDevice, sandbox } from '../../../test/devices.js';
import { withTwoInstances } from '../../../test/instances.js';
import { eventually, proxyInFrontOf } from '../../../test/tcp-proxy.js';
import { RULE_REGISTRY } from '../rules/registry.js';

const shared = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);
const DEFAULT_LIMIT = RULE_REGISTRY.find((r) => r.category === 'time_daily_limit')
  ?.default_config as Record<string, unknown>;

/** A family with a device, polled once through B so that B remembers its policy. */
async function polledThroughB(a: TestApp, b: TestApp, session: string) {
  const parent = sandbox(session);
  const setup = await quickSetup(a, parent);
  const { device_key: key } = await registerDevice(a, parent, setup.childId);
  const onB = deviceAgent(b);
  const first = await onB.policy(key);
  expect(first.statusCode).toBe(200);
  const etag = first.headers.etag as string;
  expect((await onB.policy(key, { 'if-none-match': etag })).statusCode).toBe(304);
  const setLimit = async (on: TestApp, minutes: number) => {
    const res = await on.app.inject({
      method: 'PUT',
      url: `/api/v1/policies/${setup.policyId}/rules/time_daily_limit`,
      headers: parent,
      payload: { enabled: true, config: { ...DEFAULT_LIMIT, daily_minutes: minutes } },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };
  const pollB = () => onB.policy(key, { 'if-none-match': etag });
  const pollA = () => deviceAgent(a).policy(key, { 'if-none-match': etag });
  return { setup, version: first.json().version as number, setLimit, pollA, pollB };
}

const limitOf = (body: { rules: Array<{ category: string; config: Record<string, unknown> }> }) =>
  body.rules.find((r) => r.category === 'time_daily_limit')?.config.daily_minutes;

describe.runIf(shared)('device policy poll across instances (Redis)', () => {
  it('a change through A reaches B’s next poll without its memory expiring', async () => {
    const env = { REDIS_URL: process.env.REDIS_URL ?? '' };
    await withTwoInstances({ clock: new TestClock(), env }, async (a, b) => {
      const { version, setLimit, pollB } = await polledThroughB(a, b, 'shared-poll');
      await setLimit(a, 33);
      // The clock does not move: B's TTL cannot be what drops the entry. The message crosses
      // Redis, so B may need a moment (ms) to have read it.
      await eventually(async () => (await pollB()).statusCode === 200, 'B to answer 200', 2_000);
      const changed = await pollB();
      expect(changed.json().version).toBe(version + 1);
      expect(limitOf(changed.json())).toBe(33);
    });
  });

  it('without Redis, B is stale for at most its TTL', async () => {
    const { proxy, url: viaProxy } = await proxyInFrontOf(process.env.REDIS_URL ?? '');
    const clock = new TestClock();
    try {
      await withTwoInstances({ clock, env: { REDIS_URL: viaProxy } }, async (a, b) => {
        const { version, setLimit, pollA, pollB } = await polledThroughB(a, b, 'shared-poll-cut');
        await proxy.cut();
        await setLimit(a, 44);
        // A heard its own change at once.
        const onA = await pollA();
        expect(onA.statusCode).toBe(200);
        expect(onA.json().version).toBe(version + 1);
        // B heard nothing and still answers from memory that nothing changed…
        expect((await pollB()).statusCode).toBe(304);
        clock.advance(59_000);
        expect((await pollB()).statusCode).toBe(304);
        // …until the entry's TTL (60 s, as for revoked keys) sends it to the database.
        clock.advance(2_000);
        const onB = await pollB();
        expect(onB.statusCode).toBe(200);
        expect(onB.json().version).toBe(version + 1);
        expect(limitOf(onB.json())).toBe(44);
      });
    } finally {
      await proxy.cut();
    }
  });
});
