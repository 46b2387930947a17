// The tenant every bench measures with, made through the API of an app in the bench's own
// process: a sandbox session user, an org raised to an effectively unlimited tier (so a bench
// measures serving, not 429s), a test key of that org, and a family of two children.
import type { FastifyInstance } from 'fastify';
import { systemClock } from '../src/clock.js';
import type { Db } from '../src/db/connect.js';
import { createAuditedWrites } from '../src/modules/audit/audited-writes.js';
import { createOrgsService } from '../src/modules/orgs/service.js';
import { createUsersService } from '../src/modules/users/service.js';

export interface BenchTenant {
  /** The session user's authorization header. */
  session: { authorization: string };
  /** The org key's authorization header. */
  key: { authorization: string };
  orgId: string;
  familyId: string;
}

export async function seedBenchTenant(app: FastifyInstance, db: Db): Promise<BenchTenant> {
  const session = (
    await app.inject({ method: 'POST', url: '/api/v1/sandbox/session-token' })
  ).json();
  const auth = { authorization: `Bearer ${session.access_token}` };
  const org = (
    await app.inject({
      method: 'POST',
      url: '/api/v1/developers/orgs',
      headers: auth,
      payload: { name: 'Bench' },
    })
  ).json();
  // Before the org's first keyed request, so no cached limit of 100 gets in the way of
  // seeding (thousands of devices) or of the rows.
  const deps = { db, clock: systemClock };
  await createOrgsService({
    ...deps,
    users: createUsersService(deps),
    writes: createAuditedWrites(deps),
  }).setTier(org.id, 'bench', 1e9);
  const key = (
    await app.inject({
      method: 'POST',
      url: `/api/v1/developers/orgs/${org.id}/keys`,
      headers: auth,
      payload: { name: 'bench', environment: 'test' },
    })
  ).json();
  const keyAuth = { authorization: `Bearer ${key.key}` };
  const family = (
    await app.inject({
      method: 'POST',
      url: '/api/v1/developer/families',
      headers: keyAuth,
      payload: { name: 'Bench Family' },
    })
  ).json();
  for (const [name, birth_date] of [
    ['Ada', '2016-05-01'],
    ['Bo', '2012-09-14'],
  ]) {
    await app.inject({
      method: 'POST',
      url: `/api/v1/developer/families/${family.id}/children`,
      headers: keyAuth,
      payload: { name, birth_date },
    });
  }
  return { session: auth, key: keyAuth, orgId: org.id, familyId: family.id };
}

/**
 * `count` device keys of one new child with an active policy (quick setup), and that
 * policy's ETag: what the device poll rows send, each device with its own rate-limit bucket.
 */
export async function seedDevices(
  app: FastifyInstance,
  key: Record<string, string>,
  count: number,
): Promise<{ keys: string[]; etag: string }> {
  const setup = (
    await app.inject({
      method: 'POST',
      url: '/api/v1/developer/setup/quick',
      headers: key,
      payload: { child_name: 'Device Kid', birth_date: '2015-02-03' },
    })
  ).json();
  const keys: string[] = [];
  for (let i = 0; i < count; i++) {
    const created = await app.inject({
      method: 'POST',
      url: `/api/v1/developer/children/${setup.child.id}/devices`,
      headers: key,
      payload: { device_name: `Bench device ${i}` },
    });
    keys.push(created.json().device_key);
  }
  const policy = await app.inject({
    url: '/api/v1/device/policy',
    headers: { 'x-device-key': keys[0] as string },
  });
  return { keys, etag: String(policy.headers.etag) };
}
