// Device fixtures over HTTP (CONTRACT.md §8): a sandbox family with a child and its active
// 20-rule policy, a registered device and its key, and the agent's three calls.
import { expect } from 'vitest';
import type { TestApp } from './app.js';

export type Headers = Record<string, string>;

/** An anonymous sandbox caller: each name is another user (another tenant). */
export const sandbox = (name: string): Headers => ({ 'x-sandbox-session': name });
export const deviceKey = (key: string): Headers => ({ 'x-device-key': key });

export interface ChildSetup {
  familyId: string;
  childId: string;
  policyId: string;
}

export async function quickSetup(t: TestApp, who: Headers, childName = 'Mia'): Promise<ChildSetup> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/setup/quick',
    headers: who,
    payload: { child_name: childName, birth_date: '2016-05-01' },
  });
  expect(res.statusCode, res.body).toBe(201);
  const body = res.json();
  expect(body.rules).toHaveLength(20);
  return { familyId: body.family.id, childId: body.child.id, policyId: body.policy.id };
}

export async function registerDevice(t: TestApp, who: Headers, childId: string, body: object = {}) {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/v1/children/${childId}/devices`,
    headers: who,
    payload: { device_name: 'Mia’s tablet', ...body },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { device: Record<string, unknown> & { id: string }; device_key: string };
}

/** The on-device agent's calls, with its key. */
export function deviceAgent(t: TestApp) {
  return {
    policy: (key: string, headers: Headers = {}, query = '') =>
      t.app.inject({
        url: `/api/v1/device/policy${query}`,
        headers: { ...deviceKey(key), ...headers },
      }),
    report: (key: string, payload: unknown) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/device/report',
        headers: deviceKey(key),
        payload: payload as object,
      }),
    ack: (key: string, payload: unknown) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/device/ack',
        headers: deviceKey(key),
        payload: payload as object,
      }),
  };
}

export function expectEnvelope(
  res: { statusCode: number; json(): unknown },
  status: number,
  message: string,
): void {
  expect(res.statusCode).toBe(status);
  expect(res.json()).toEqual({ error: expect.any(String), message, code: status });
}
