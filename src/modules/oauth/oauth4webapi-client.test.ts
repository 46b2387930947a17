// A standard OAuth 2.0 client library (oauth4webapi) completes the sandbox flow against a
// listening server: what it sends (form bodies, Basic client auth, PKCE) is accepted and what
// we answer passes its response checks.
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildListeningTestApp, type TestApp } from '../../../test/app.js';
import { DEMO_CHILDREN } from '../demo/demo-family.js';

/** Spec: "Provider connect config". */
interface ConnectConfig {
  authorize_url: string;
  token_url: string;
  profiles_url: string;
  scopes: string[];
  name: string;
}

// http:// on 127.0.0.1 is refused by oauth4webapi unless explicitly allowed.
const INSECURE = { [oauth.allowInsecureRequests]: true } as const;
const REDIRECT_URI = 'http://127.0.0.1:9/callback';

describe('sandbox OAuth provider with oauth4webapi', () => {
  let t: TestApp;
  let connect: ConnectConfig;
  let as: oauth.AuthorizationServer;
  const client: oauth.Client = { client_id: 'haven-oauth4webapi-test' };
  // The provider ignores client authentication; a real client would send it anyway.
  const clientAuth = oauth.ClientSecretBasic('not-checked-by-the-sandbox');

  beforeAll(async () => {
    const listening = await buildListeningTestApp();
    t = listening;
    // Discovery the way an integrator does it: the provider's published connect config.
    const discovered = await fetch(
      `${listening.baseUrl}/api/v1/providers/did:ocss:sandbox-provider/connect`,
    );
    expect(discovered.status).toBe(200);
    connect = (await discovered.json()) as ConnectConfig;
    expect(connect.scopes).toEqual(['child_profiles.read']);
    as = {
      issuer: listening.baseUrl,
      authorization_endpoint: connect.authorize_url,
      token_endpoint: connect.token_url,
    };
  });
  afterAll(async () => t.close());

  /** The authorization request as oauth4webapi's documentation builds it. */
  async function authorizationUrl(state: string, codeVerifier: string, account?: string) {
    const url = new URL(connect.authorize_url);
    url.searchParams.set('client_id', client.client_id);
    url.searchParams.set('redirect_uri', REDIRECT_URI);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('scope', connect.scopes.join(' '));
    url.searchParams.set('state', state);
    url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(codeVerifier));
    url.searchParams.set('code_challenge_method', 'S256');
    if (account) {
      url.searchParams.set('account', account);
    }
    return url;
  }

  /** Plays the user's part: the consent decision, then the redirect the browser would follow. */
  async function decide(url: URL, decision: 'approve' | 'deny'): Promise<URL> {
    url.searchParams.set('decision', decision);
    const response = await fetch(url, { redirect: 'manual' });
    expect(response.status).toBe(302);
    const location = response.headers.get('location') ?? '';
    expect(location.startsWith(`${REDIRECT_URI}?`)).toBe(true);
    return new URL(location);
  }

  async function completeFlow(account?: string) {
    const state = oauth.generateRandomState();
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const callback = await decide(await authorizationUrl(state, codeVerifier, account), 'approve');
    const params = oauth.validateAuthResponse(as, client, callback, state);
    expect(params.get('code')).toMatch(/^sbxauth_/);
    const tokenResponse = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      clientAuth,
      params,
      REDIRECT_URI,
      codeVerifier,
      INSECURE,
    );
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, tokenResponse);
    return tokens;
  }

  const readProfiles = (accessToken: string) =>
    oauth.protectedResourceRequest(
      accessToken,
      'GET',
      new URL(connect.profiles_url),
      undefined,
      undefined,
      INSECURE,
    );

  it('runs authorize → token → profiles with the library’s own requests', async () => {
    const tokens = await completeFlow();
    expect(tokens.access_token).toMatch(/^sbxtok_/);
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.scope).toBe('profiles');

    const response = await readProfiles(tokens.access_token);
    expect(response.status).toBe(200);
    const profiles = (await response.json()) as Array<Record<string, unknown>>;
    expect(profiles.map((p) => p.displayName)).toEqual(DEMO_CHILDREN.map((c) => c.name));
    expect(profiles.map((p) => p.subject_ref)).toEqual(DEMO_CHILDREN.map((c) => c.id));
  });

  it('runs the flow for the account without children', async () => {
    const tokens = await completeFlow('no-children');
    const response = await readProfiles(tokens.access_token);
    expect(await response.json()).toEqual([]);
  });

  it('surfaces a denial as the library’s authorization response error', async () => {
    const state = oauth.generateRandomState();
    const callback = await decide(
      await authorizationUrl(state, oauth.generateRandomCodeVerifier()),
      'deny',
    );
    let caught: unknown;
    try {
      oauth.validateAuthResponse(as, client, callback, state);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(oauth.AuthorizationResponseError);
    expect((caught as oauth.AuthorizationResponseError).error).toBe('access_denied');
  });

  it('surfaces an expired code as invalid_grant', async () => {
    const state = oauth.generateRandomState();
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const callback = await decide(await authorizationUrl(state, codeVerifier), 'approve');
    const params = oauth.validateAuthResponse(as, client, callback, state);
    t.clock.advance(10 * 60_000);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      clientAuth,
      params,
      REDIRECT_URI,
      codeVerifier,
      INSECURE,
    );
    await expect(oauth.processAuthorizationCodeResponse(as, client, response)).rejects.toSatisfy(
      (error) => error instanceof oauth.ResponseBodyError && error.error === 'invalid_grant',
    );
  });

  it('surfaces an expired token as a Bearer invalid_token challenge', async () => {
    const tokens = await completeFlow();
    t.clock.advance(3600 * 1000);
    await expect(readProfiles(tokens.access_token)).rejects.toSatisfy(
      (error) =>
        error instanceof oauth.WWWAuthenticateChallengeError &&
        error.status === 401 &&
        error.cause.some(
          (challenge) =>
            challenge.scheme === 'bearer' && challenge.parameters.error === 'invalid_token',
        ),
    );
  });
});
