// Identity fixtures over HTTP: a new session user, an org, a key — made the way a developer
// makes them, through the API.
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { loadDevIssuer } from '../src/auth/dev-issuer.js';
import type { TestApp } from './app.js';

export interface Session {
  token: string;
  userId: string;
  auth: { authorization: string };
}

export async function newSession(app: FastifyInstance): Promise<Session> {
  const minted = await app.inject({ method: 'POST', url: '/api/v1/sandbox/session-token' });
  expect(minted.statusCode).toBe(201);
  const token = minted.json().access_token as string;
  const me = await app.inject({
    url: '/api/v1/auth/me',
    headers: { authorization: `Bearer ${token}` },
  });
  expect(me.statusCode).toBe(200);
  return { token, userId: me.json().id, auth: { authorization: `Bearer ${token}` } };
}

export async function createOrg(app: FastifyInstance, session: Session, name = 'Acme Kids') {
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/developers/orgs',
    headers: session.auth,
    payload: { name },
  });
  expect(res.statusCode).toBe(201);
  return res.json() as { id: string; slug: string; rate_limit_rpm: number; tier: string };
}

export interface MintedKey {
  id: string;
  key: string;
  key_prefix: string;
  scopes: string[];
  environment: string;
}

export async function mintKey(
  app: FastifyInstance,
  session: Session,
  orgId: string,
  body: Record<string, unknown> = {},
): Promise<MintedKey> {
  const res = await app.inject({
    method: 'POST',
    url: `/api/v1/developers/orgs/${orgId}/keys`,
    headers: session.auth,
    payload: { name: 'server', environment: 'test', ...body },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

export function bearer(secret: string): { authorization: string } {
  return { authorization: `Bearer ${secret}` };
}

/**
 * A session that outlives the tests' clock jumps: minted by the deployment's own
 * development issuer (the key is in the test database) with a long lifetime.
 */
export async function longSession(t: TestApp, ttlSeconds = 400 * 86_400): Promise<Session> {
  const issuer = await loadDevIssuer(t.database.handle.db, { clock: t.clock });
  const { token } = await issuer.mint({ ttlSeconds });
  const auth = { authorization: `Bearer ${token}` };
  const me = await t.app.inject({ url: '/api/v1/auth/me', headers: auth });
  expect(me.statusCode).toBe(200);
  return { token, userId: me.json().id, auth };
}
