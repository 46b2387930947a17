// The sandbox reference OAuth provider through its HTTP surface (CONTRACT.md §5, §6).
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { productionEnv } from '../../../test/production.js';
import { DEMO_CHILDREN } from '../demo/demo-family.js';

const CALLBACK = 'https://client.example/cb';
const MINUTE = 60_000;

const authorizeUrl = (params: Record<string, string>) =>
  `/oauth/authorize?${new URLSearchParams(params).toString()}`;

/** The query of a redirect's Location, decoded. */
const locationParams = (location: string | string[] | number | undefined) =>
  new URL(String(location)).searchParams;

describe('sandbox OAuth provider: GET /oauth/authorize', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => t.close());

  const authorize = (params: Record<string, string>) => t.app.inject({ url: authorizeUrl(params) });

  it('shows a self-contained consent page with Approve and Deny, locked down by CSP', async () => {
    const res = await authorize({ redirect_uri: CALLBACK, state: 'abc', client_id: 'haven' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-frame-options']).toBe('DENY');
    const csp = String(res.headers['content-security-policy']);
    for (const directive of [
      "default-src 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
      "base-uri 'none'",
    ]) {
      expect(csp).toContain(directive);
    }
    // The one inline style is allowed by its hash, not by 'unsafe-inline'.
    const style = /<style>([^<]*)<\/style>/.exec(res.body)?.[1] ?? '';
    const hash = createHash('sha256').update(style).digest('base64');
    expect(csp).toContain(`style-src 'sha256-${hash}'`);
    expect(csp).not.toContain('unsafe-inline');
    // Nothing external, nothing executable.
    expect(res.body).not.toMatch(/<script|<link|<img|<iframe|\s(src|action)=/i);
    expect(res.body).not.toMatch(/href="(https?:)?\/\//);

    expect(res.body).toContain('>Approve</a>');
    expect(res.body).toContain('>Deny</a>');
    for (const child of DEMO_CHILDREN) {
      expect(res.body).toContain(child.name);
    }
    const hrefs = [...res.body.matchAll(/href="([^"]*)"/g)].map((m) =>
      (m[1] ?? '').replaceAll('&amp;', '&'),
    );
    expect(hrefs).toHaveLength(2);
    const [approve, deny] = hrefs.map((href) => new URLSearchParams(href.replace(/^\?/, '')));
    expect(Object.fromEntries(approve ?? [])).toEqual({
      redirect_uri: CALLBACK,
      state: 'abc',
      client_id: 'haven',
      decision: 'approve',
    });
    expect(deny?.get('decision')).toBe('deny');
  });

  it('escapes a hostile state and client_id everywhere on the page', async () => {
    const hostile = `"><script>alert('x')</script><a href="javascript:alert(1)">&amp;`;
    const res = await authorize({ redirect_uri: CALLBACK, state: hostile, client_id: hostile });
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain('<script>');
    expect(res.body).not.toContain(hostile);
    expect(res.body).not.toContain('href="javascript:');
    expect(res.body).toContain('&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;');
    // The state survives the round trip through the Approve link intact.
    const href = (/class="button approve" href="([^"]*)"/.exec(res.body)?.[1] ?? '').replaceAll(
      '&amp;',
      '&',
    );
    const approved = await t.app.inject({ url: `/oauth/authorize${href}` });
    expect(approved.statusCode).toBe(302);
    expect(locationParams(approved.headers.location).get('state')).toBe(hostile);
  });

  it('keeps a decision already in the URL out of the links, and a repeated one is refused', async () => {
    const res = await t.app.inject({
      url: '/oauth/authorize?redirect_uri=https%3A%2F%2Fclient.example%2Fcb&state=s&scope=a+b',
    });
    expect(res.body).toContain(
      'href="?redirect_uri=https%3A%2F%2Fclient.example%2Fcb&amp;state=s&amp;scope=a+b&amp;decision=approve"',
    );
    const twice = await t.app.inject({
      url: `${authorizeUrl({ redirect_uri: CALLBACK })}&decision=approve&decision=deny`,
    });
    expect(twice.statusCode).toBe(400);
  });

  it('tells the no-children account that nothing will be shared', async () => {
    const res = await authorize({ redirect_uri: CALLBACK, account: 'no-children' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('no child profiles');
    for (const child of DEMO_CHILDREN) {
      expect(res.body).not.toContain(child.name);
    }
  });

  it('approves: 302 back with an sbxauth_ code and the state, the client query kept', async () => {
    const res = await authorize({
      redirect_uri: `${CALLBACK}?tenant=a%20b&x`,
      state: 'st ate/+&=é',
      decision: 'approve',
    });
    expect(res.statusCode).toBe(302);
    expect(res.headers['cache-control']).toBe('no-store');
    const location = String(res.headers.location);
    // The client's own query stays exactly as it was written, the response comes after it.
    expect(location.startsWith(`${CALLBACK}?tenant=a%20b&x&code=sbxauth_`)).toBe(true);
    const params = locationParams(location);
    expect(params.get('code')).toMatch(/^sbxauth_[A-Za-z0-9_.-]+$/);
    expect(params.get('state')).toBe('st ate/+&=é');
    expect(params.get('tenant')).toBe('a b');
    expect(params.has('error')).toBe(false);
    // Percent-encoded, so a plain decodeURIComponent reads it back too.
    const rawState = /[?&]state=([^&]*)/.exec(location)?.[1] ?? '';
    expect(decodeURIComponent(rawState)).toBe('st ate/+&=é');
  });

  it('mints a different code every time', async () => {
    const codes = new Set<string | null>();
    for (let i = 0; i < 3; i++) {
      const res = await authorize({ redirect_uri: CALLBACK, decision: 'approve' });
      codes.add(locationParams(res.headers.location).get('code'));
    }
    expect(codes.size).toBe(3);
  });

  it('omits state from the redirect when the client sent none', async () => {
    const res = await authorize({ redirect_uri: CALLBACK, decision: 'approve' });
    expect(locationParams(res.headers.location).has('state')).toBe(false);
  });

  it('denies: 302 back with error=access_denied and the state, no code', async () => {
    const res = await authorize({ redirect_uri: CALLBACK, state: 'keep-me', decision: 'deny' });
    expect(res.statusCode).toBe(302);
    const params = locationParams(res.headers.location);
    expect(params.get('error')).toBe('access_denied');
    expect(params.get('state')).toBe('keep-me');
    expect(params.has('code')).toBe(false);
    expect(String(res.headers.location).startsWith(`${CALLBACK}?error=access_denied&`)).toBe(true);
  });

  it('takes what a standard OAuth client sends, and redirects an unsupported response_type', async () => {
    const standard = await authorize({
      redirect_uri: CALLBACK,
      state: 's1',
      decision: 'approve',
      client_id: 'haven',
      response_type: 'code',
      scope: 'child_profiles.read',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      nonce: 'unknown parameters are ignored',
    });
    expect(standard.statusCode).toBe(302);
    expect(locationParams(standard.headers.location).get('code')).toMatch(/^sbxauth_/);

    const implicit = await authorize({
      redirect_uri: CALLBACK,
      state: 's2',
      response_type: 'token',
      decision: 'approve',
    });
    expect(implicit.statusCode).toBe(302);
    const params = locationParams(implicit.headers.location);
    expect(params.get('error')).toBe('unsupported_response_type');
    expect(params.get('state')).toBe('s2');
    expect(params.has('code')).toBe(false);
  });

  it.each([
    ['relative', '/callback'],
    ['javascript:', 'javascript:alert(document.cookie)'],
    ['data:', 'data:text/html,<script>alert(1)</script>'],
    ['ftp:', 'ftp://client.example/cb'],
    ['no host', 'http:///cb'],
    ['slashless', 'http:client.example/cb'],
    ['backslashed', 'https:\\\\evil.example/cb'],
    ['space-padded', ' https://client.example/cb'],
    ['newline-split', 'https://client.exa\nmple/cb'],
    ['a fragment', 'https://client.example/cb#frag'],
    ['empty', ''],
  ])('refuses a %s redirect_uri with an OAuth-style 400, never a redirect', async (_, uri) => {
    const res = await authorize({ redirect_uri: uri, state: 's', decision: 'approve' });
    expect(res.statusCode).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(res.json().error).toBe('invalid_request');
    expect(res.json().error_description).toMatch(/^redirect_uri /);
  });

  it('refuses a missing redirect_uri, an unknown account and an unknown decision (400)', async () => {
    const missing = await authorize({ state: 's', decision: 'approve' });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toEqual({
      error: 'invalid_request',
      error_description: 'redirect_uri is required',
    });
    const account = await authorize({ redirect_uri: CALLBACK, account: 'admin' });
    expect(account.statusCode).toBe(400);
    expect(account.json().error_description).toBe('account must be one of: demo, no-children');
    const decision = await authorize({ redirect_uri: CALLBACK, decision: 'maybe' });
    expect(decision.statusCode).toBe(400);
    expect(decision.headers.location).toBeUndefined();
  });
});

describe('sandbox OAuth provider: POST /oauth/token and GET /oauth/profiles', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => t.close());

  const mintCode = async (account?: string) => {
    const res = await t.app.inject({
      url: authorizeUrl({
        redirect_uri: CALLBACK,
        decision: 'approve',
        ...(account ? { account } : {}),
      }),
    });
    return locationParams(res.headers.location).get('code') ?? '';
  };
  const tokenJson = (payload: Record<string, unknown>) =>
    t.app.inject({ method: 'POST', url: '/oauth/token', payload });
  const tokenForm = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      payload: new URLSearchParams(fields).toString(),
    });
  const accessToken = async (account?: string) =>
    (await tokenJson({ grant_type: 'authorization_code', code: await mintCode(account) })).json()
      .access_token as string;
  const profiles = (authorization?: string) =>
    t.app.inject({
      url: '/oauth/profiles',
      headers: authorization === undefined ? {} : { authorization },
    });
  const expectOAuthError = (
    res: Awaited<ReturnType<typeof tokenJson>>,
    error: string,
    status = 400,
  ) => {
    expect(res.statusCode).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['error', 'error_description']);
    expect(body.error).toBe(error);
    expect(typeof body.error_description).toBe('string');
  };
  const expectInvalidToken = (res: Awaited<ReturnType<typeof profiles>>) => {
    expect(res.statusCode).toBe(401);
    expect(res.body).toBe('{"error":"invalid_token"}');
    expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
  };

  it('exchanges a code sent as JSON for a Bearer token, never cached', async () => {
    const res = await tokenJson({ grant_type: 'authorization_code', code: await mintCode() });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(body).toEqual({
      access_token: expect.stringMatching(/^sbxtok_/),
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'profiles',
    });
  });

  it('exchanges a form-encoded code, ignoring client auth, redirect_uri and code_verifier', async () => {
    const res = await tokenForm(
      {
        grant_type: 'authorization_code',
        code: await mintCode(),
        redirect_uri: CALLBACK,
        client_id: 'haven',
        client_secret: 'whatever',
        code_verifier: 'dBjftJeZ4CVP-mJ92K9hfKLSqqbQ1J2Ii7gP4Q3yfRc',
      },
      {
        'content-type': 'application/x-www-form-urlencoded;charset=UTF-8',
        authorization: `Basic ${Buffer.from('haven:secret').toString('base64')}`,
      },
    );
    expect(res.statusCode).toBe(200);
    expect(res.json().access_token).toMatch(/^sbxtok_/);
  });

  it('lets any fresh code exchange more than once (stateless, as the spec says)', async () => {
    const code = await mintCode();
    for (let i = 0; i < 2; i++) {
      expect((await tokenForm({ grant_type: 'authorization_code', code })).statusCode).toBe(200);
    }
  });

  it('answers unsupported_grant_type for any other grant', async () => {
    for (const grant_type of ['password', 'client_credentials', 'refresh_token', '']) {
      expectOAuthError(await tokenForm({ grant_type, code: 'x' }), 'unsupported_grant_type');
    }
  });

  it('answers invalid_request for a malformed request, keeping 413 and 415', async () => {
    expectOAuthError(await tokenForm({ code: await mintCode() }), 'invalid_request');
    expectOAuthError(await tokenForm({ grant_type: 'authorization_code' }), 'invalid_request');
    expectOAuthError(await tokenJson({ grant_type: 5, code: 'x' }), 'invalid_request');
    const repeated = await t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'grant_type=authorization_code&code=a&code=b',
    });
    expectOAuthError(repeated, 'invalid_request');
    const badJson = await t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/json' },
      payload: '{"grant_type":',
    });
    expectOAuthError(badJson, 'invalid_request');
    expect(badJson.json().error_description).toBe('invalid JSON body');
    const noBody = await t.app.inject({ method: 'POST', url: '/oauth/token' });
    expectOAuthError(noBody, 'invalid_request');
    const text = await t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'text/plain' },
      payload: 'grant_type=authorization_code',
    });
    expectOAuthError(text, 'invalid_request', 415);
    const huge = await tokenForm({ grant_type: 'authorization_code', code: 'x'.repeat(1 << 20) });
    expectOAuthError(huge, 'invalid_request', 413);
  });

  it('treats a __proto__ field as a plain (ignored) parameter', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `__proto__=x&constructor=y&grant_type=authorization_code&code=${await mintCode()}`,
    });
    expect(res.statusCode).toBe(200);
  });

  it('answers invalid_grant for an unknown, expired, tampered or misused code', async () => {
    expectOAuthError(
      await tokenJson({ grant_type: 'authorization_code', code: 'sbxauth_nope' }),
      'invalid_grant',
    );

    // Valid for 10 minutes by the server's clock, not a moment longer.
    const aging = await mintCode();
    t.clock.advance(10 * MINUTE - 1);
    expect((await tokenJson({ grant_type: 'authorization_code', code: aging })).statusCode).toBe(
      200,
    );
    t.clock.advance(1);
    expectOAuthError(
      await tokenJson({ grant_type: 'authorization_code', code: aging }),
      'invalid_grant',
    );

    const code = await mintCode();
    const [payload = '', mac = ''] = code.slice('sbxauth_'.length).split('.');
    const flip = (text: string, at: number) =>
      text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
    // A forged payload (another account, a later expiry) under the old signature.
    const forgedPayload = Buffer.from(
      JSON.stringify({ a: 'no-children', x: Date.parse('2100-01-01'), n: 'n' }),
    ).toString('base64url');
    for (const tampered of [
      `sbxauth_${flip(payload, 5)}.${mac}`,
      `sbxauth_${payload}.${flip(mac, 0)}`,
      `sbxauth_${payload}.${mac}x`,
      `sbxauth_${payload}`,
      `sbxauth_${forgedPayload}.${mac}`,
      code.toUpperCase(),
    ]) {
      expectOAuthError(
        await tokenJson({ grant_type: 'authorization_code', code: tampered }),
        'invalid_grant',
      );
    }

    // The access token is signed with the same secret, yet is never a code.
    const token = await accessToken();
    expectOAuthError(
      await tokenJson({ grant_type: 'authorization_code', code: token }),
      'invalid_grant',
    );
    const tokenAsCode = `sbxauth_${token.slice('sbxtok_'.length)}`;
    expectOAuthError(
      await tokenJson({ grant_type: 'authorization_code', code: tokenAsCode }),
      'invalid_grant',
    );
  });

  it("serves the demo family's children as a bare array of ChildProfile", async () => {
    const res = await profiles(`Bearer ${await accessToken()}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    // Unmetered: outside /api/v1, no rate-limit headers.
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    const body = res.json() as Array<Record<string, unknown>>;
    expect(Array.isArray(body)).toBe(true);
    expect(
      body.map(({ displayName, subject_ref, kind }) => ({ displayName, subject_ref, kind })),
    ).toEqual(
      DEMO_CHILDREN.map((child) => ({
        displayName: child.name,
        subject_ref: child.id,
        kind: 'child',
      })),
    );
    for (const profile of body) {
      expect(Object.keys(profile).sort()).toEqual(['displayName', 'id', 'kind', 'subject_ref']);
      expect(profile.id).toEqual(expect.stringMatching(/.+/));
    }
    // Stable: another token, a later time, the same ids.
    t.clock.advance(30 * MINUTE);
    const again = (await profiles(`bearer ${await accessToken('demo')}`)).json() as typeof body;
    expect(again.map((p) => p.id)).toEqual(body.map((p) => p.id));
  });

  it('serves exactly [] to the no-children account', async () => {
    const res = await profiles(`Bearer ${await accessToken('no-children')}`);
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('[]');
  });

  it('answers 401 invalid_token for a missing, malformed, tampered, expired or wrong credential', async () => {
    expectInvalidToken(await profiles());
    expectInvalidToken(await profiles(''));
    expectInvalidToken(await profiles('Bearer'));
    expectInvalidToken(await profiles('Basic aGF2ZW46c2VjcmV0'));
    const token = await accessToken();
    expectInvalidToken(await profiles(`Bearer ${token}x`));
    expectInvalidToken(await profiles(`Bearer ${token.slice(0, -1)}`));
    expectInvalidToken(await profiles(`Bearer ${await mintCode()}`));
    expectInvalidToken(await profiles(`Bearer sbxtok_${'A'.repeat(4000)}`));

    // Valid for 3600 s by the server's clock.
    t.clock.advance(3600 * 1000 - 1);
    expect((await profiles(`Bearer ${token}`)).statusCode).toBe(200);
    t.clock.advance(1);
    expectInvalidToken(await profiles(`Bearer ${token}`));
  });
});

describe('sandbox OAuth provider outside the sandbox', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({
      env: productionEnv(),
    });
  });
  afterAll(async () => t.close());

  it('answers 404 text/plain on all three routes, whatever is sent', async () => {
    const requests = [
      { url: authorizeUrl({ redirect_uri: CALLBACK, decision: 'approve' }) },
      { url: authorizeUrl({ redirect_uri: 'javascript:alert(1)' }) },
      { method: 'POST' as const, url: '/oauth/token', payload: { grant_type: 'x' } },
      {
        method: 'POST' as const,
        url: '/oauth/token',
        headers: { 'content-type': 'application/json' },
        payload: '{not json',
      },
      {
        method: 'POST' as const,
        url: '/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'grant_type=authorization_code&code=x',
      },
      { url: '/oauth/profiles' },
      { url: '/oauth/profiles', headers: { authorization: 'Bearer sbxtok_x' } },
    ];
    for (const request of requests) {
      const res = await t.app.inject(request);
      expect(res.statusCode, request.url).toBe(404);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      expect(res.body).toBe('Not Found');
      expect(res.headers.location).toBeUndefined();
    }
  });

  it('leaves the routes out of the API document', async () => {
    const doc = (await t.app.inject({ url: '/openapi.json' })).json() as {
      paths: Record<string, unknown>;
    };
    expect(Object.keys(doc.paths).filter((path) => path.startsWith('/oauth/'))).toEqual([]);
  });
});
