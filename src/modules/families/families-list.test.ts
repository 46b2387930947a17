// GET /families for each kind of caller: the list's statement differs by tenant (an org's
// families of one environment; a user's through membership; an MCP token's one family),
// and each is compiled once (db/reused-statement.ts), so each shape is checked here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { bearer, createOrg, longSession, mintKey, type Session } from '../../../test/identity.js';
import { DEMO_FAMILY_ID } from '../demo/demo-family.js';

describe('GET /families lists what the caller sees, newest first', () => {
  let t: TestApp;
  let owner: Session;
  let other: Session;
  /** The names listed; a sandbox deployment adds its demo family last (checked apart). */
  const names = async (url: string, headers: Record<string, string>) => {
    const answer = await t.app.inject({ method: 'GET', url, headers });
    expect(answer.statusCode, answer.body).toBe(200);
    const families = answer.json() as Array<{ id: string; name: string }>;
    const demoAt = families.findIndex((family) => family.id === DEMO_FAMILY_ID);
    expect([-1, families.length - 1]).toContain(demoAt);
    return families.filter((family) => family.id !== DEMO_FAMILY_ID).map((family) => family.name);
  };
  const create = async (url: string, headers: Record<string, string>, name: string) => {
    const answer = await t.app.inject({ method: 'POST', url, headers, payload: { name } });
    expect(answer.statusCode, answer.body).toBe(201);
    t.clock.advance(1_000);
    return answer.json() as { id: string };
  };

  beforeAll(async () => {
    t = await buildTestApp({ env: { WORKERS: 'off' } });
    owner = await longSession(t);
    other = await longSession(t);
  });
  afterAll(() => t.close());

  it('a user sees the families they belong to, an MCP token only its own', async () => {
    await create('/api/v1/families', owner.auth, 'First');
    const second = await create('/api/v1/families', owner.auth, 'Second');
    await create('/api/v1/families', other.auth, 'Someone else’s');
    expect(await names('/api/v1/families', owner.auth)).toEqual(['Second', 'First']);
    expect(await names('/api/v1/families', other.auth)).toEqual(['Someone else’s']);

    const minted = await t.app.inject({
      method: 'POST',
      url: '/api/v1/mcp/tokens',
      headers: owner.auth,
      payload: { family_id: second.id, label: 'list' },
    });
    expect(minted.statusCode, minted.body).toBe(201);
    expect(await names('/api/v1/families', bearer(minted.json().plain))).toEqual(['Second']);
  });

  it('a key sees its org’s families of its environment only', async () => {
    const org = await createOrg(t.app, owner, 'Listing Org');
    const key = bearer((await mintKey(t.app, owner, org.id)).key);
    const otherKey = bearer(
      (await mintKey(t.app, other, (await createOrg(t.app, other, 'Other Org')).id)).key,
    );
    await create('/api/v1/developer/families', key, 'Org one');
    await create('/api/v1/developer/families', key, 'Org two');
    await create('/api/v1/developer/families', otherKey, 'Other org’s');
    expect(await names('/api/v1/developer/families', key)).toEqual(['Org two', 'Org one']);
    expect(await names('/api/v1/developer/families', otherKey)).toEqual(['Other org’s']);
  });
});
