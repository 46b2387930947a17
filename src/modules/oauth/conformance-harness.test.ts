// What a conformance harness checks of a provider, with nothing but fetch against a
// listening server: authorize without following the redirect, a form-posted token request,
// then a profiles body that is a bare array of real-looking child profiles.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';

const CALLBACK = 'http://127.0.0.1:9/harness/callback?run=1';

/** Names a harness rejects as placeholders, not children (whole word, any case). */
const PLACEHOLDER_NAME = /\b(account|owner|default|primary|adult|user|child|test)\b/i;

describe('sandbox OAuth provider under a conformance harness', () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await buildTestApp();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => t.close());

  async function profilesOf(account?: string): Promise<unknown> {
    const state = `harness-${account ?? 'default'}`;
    const authorize = new URL('/oauth/authorize', base);
    authorize.searchParams.set('redirect_uri', CALLBACK);
    authorize.searchParams.set('state', state);
    authorize.searchParams.set('decision', 'approve');
    if (account) {
      authorize.searchParams.set('account', account);
    }
    const redirect = await fetch(authorize, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    const callback = new URL(redirect.headers.get('location') ?? '');
    expect(`${callback.origin}${callback.pathname}`).toBe('http://127.0.0.1:9/harness/callback');
    expect(callback.searchParams.get('run')).toBe('1');
    expect(callback.searchParams.get('state')).toBe(state);
    const code = callback.searchParams.get('code') ?? '';
    expect(code.startsWith('sbxauth_')).toBe(true);

    const token = await fetch(new URL('/oauth/token', base), {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'authorization_code', code }),
    });
    expect(token.status).toBe(200);
    expect(token.headers.get('cache-control')).toBe('no-store');
    const grant = (await token.json()) as Record<string, unknown>;
    expect(grant).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'profiles' });
    expect(String(grant.access_token).startsWith('sbxtok_')).toBe(true);

    const profiles = await fetch(new URL('/oauth/profiles', base), {
      headers: { authorization: `Bearer ${grant.access_token}` },
    });
    expect(profiles.status).toBe(200);
    expect(profiles.headers.get('content-type')).toMatch(/^application\/json/);
    return profiles.json();
  }

  it('serves the demo account as a bare array of named child profiles', async () => {
    const body = await profilesOf();
    expect(Array.isArray(body)).toBe(true);
    const profiles = body as Array<Record<string, unknown>>;
    expect(profiles.length).toBeGreaterThan(0);
    for (const profile of profiles) {
      expect(typeof profile.id).toBe('string');
      expect(String(profile.id).length).toBeGreaterThan(0);
      expect(typeof profile.displayName).toBe('string');
      expect(String(profile.displayName).trim().length).toBeGreaterThan(0);
      expect(profile.displayName).not.toMatch(PLACEHOLDER_NAME);
      expect(profile.kind).toBe('child');
    }
    expect(new Set(profiles.map((p) => p.id)).size).toBe(profiles.length);
  });

  it('serves exactly [] to account=no-children', async () => {
    expect(await profilesOf('no-children')).toEqual([]);
  });

  it('refuses a profiles request without a token with the exact challenge', async () => {
    const res = await fetch(new URL('/oauth/profiles', base));
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect(await res.text()).toBe('{"error":"invalid_token"}');
  });

  it('recognises the placeholder names it rejects', () => {
    for (const name of ['Account', 'primary', 'Test User', 'Child 1', 'ADULT']) {
      expect(name).toMatch(PLACEHOLDER_NAME);
    }
    for (const name of ['Maya Rivera', 'Testa Childers', 'Userina']) {
      expect(name).not.toMatch(PLACEHOLDER_NAME);
    }
  });
});
