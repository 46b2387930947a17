// A DELETE retried with its Idempotency-Key (the SDK retries every write with the same key)
// answers with the Haven-Erasure-Id of the erasure its first attempt made: the id comes only
// in a header, and a client that lost the first answer has no other way to learn it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';

const who = { 'x-sandbox-session': 'erasure-replay' };

describe('a replayed erasure', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('repeats the first answer’s Haven-Erasure-Id, and erases nothing twice', async () => {
    const setup = await t.app.inject({
      method: 'POST',
      url: '/api/v1/setup/quick',
      headers: who,
      payload: { child_name: 'Once', birth_date: '2015-03-04' },
    });
    expect(setup.statusCode).toBe(201);
    const childId = setup.json().child.id as string;
    const erase = () =>
      t.app.inject({
        method: 'DELETE',
        url: `/api/v1/children/${childId}`,
        headers: { ...who, 'idempotency-key': `erase-${childId}` },
      });
    const first = await erase();
    expect(first.statusCode).toBe(204);
    const erasureId = first.headers['haven-erasure-id'];
    expect(erasureId).toMatch(/^[0-9a-f-]{36}$/);
    const again = await erase();
    expect(again.statusCode).toBe(200);
    expect(again.headers['ocss-replay']).toBe('original');
    expect(again.headers['haven-erasure-id']).toBe(erasureId);
    const receipt = await t.app.inject({ url: `/api/v1/erasures/${erasureId}`, headers: who });
    expect(receipt.statusCode).toBe(200);
    expect(receipt.json().subject).toEqual({ type: 'child', id: childId });
  });
});
