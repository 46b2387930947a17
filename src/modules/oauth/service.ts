// The sandbox reference OAuth provider (spec: "Reference OAuth-style connect flow";
// CONTRACT.md §6), as an in-process service: the routes use it, and so does the connections
// module, which completes a connection by redeeming a code without an HTTP round trip.
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import { loadServiceSecret } from '../../db/service-secrets.js';
import { OAuthError } from './oauth-errors.js';
import { type ChildProfile, profilesFor, type SandboxAccount } from './profiles.js';
import {
  createSandboxCredentials,
  type SandboxCredentials,
  TOKEN_LIFETIME_SECONDS,
} from './sandbox-credentials.js';

export type { ChildProfile, SandboxAccount } from './profiles.js';

/** The name of the HMAC key in service_secrets (shared by every instance on the database). */
export const SANDBOX_OAUTH_SECRET_NAME = 'sandbox-oauth-hmac';

/** Spec: the issued token carries scope `profiles` (the connect config advertises another). */
export const TOKEN_SCOPE = 'profiles';

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
}

export interface TokenRequest {
  grant_type: string;
  code?: string;
}

export interface SandboxOAuthProvider {
  /** False outside a sandbox deployment: the routes answer 404 and nothing redeems. */
  readonly enabled: boolean;
  /** A fresh authorization code (`sbxauth_…`, valid 10 minutes) for the account. */
  issueCode(account: SandboxAccount): string;
  /** The account behind a valid, unexpired code; undefined otherwise. Codes are not single-use. */
  redeemCode(code: string): { account: SandboxAccount } | undefined;
  /** The token endpoint's rules; throws OAuthError with the RFC 6749 §5.2 code. */
  grantToken(request: TokenRequest): TokenResponse;
  /** The account behind a valid, unexpired access token (`sbxtok_…`); undefined otherwise. */
  verifyAccessToken(token: string): { account: SandboxAccount } | undefined;
  profilesFor(account: SandboxAccount): ChildProfile[];
}

export interface SandboxOAuthDeps {
  db: Db;
  clock: Clock;
  /** Whether this deployment is a sandbox (default true; the wiring passes APP_ENV). */
  enabled?: boolean;
}

export async function createSandboxOAuthProvider(
  deps: SandboxOAuthDeps,
): Promise<SandboxOAuthProvider> {
  const enabled = deps.enabled ?? true;
  // Outside the sandbox no secret is created at all: there is nothing to sign or verify.
  const credentials: SandboxCredentials | undefined = enabled
    ? createSandboxCredentials(
        await loadServiceSecret(deps.db, SANDBOX_OAUTH_SECRET_NAME),
        deps.clock,
      )
    : undefined;

  function mint(kind: 'code' | 'token', account: SandboxAccount): string {
    if (!credentials) {
      throw new Error('the sandbox OAuth provider exists only on a sandbox deployment');
    }
    return credentials.mint(kind, account);
  }

  const redeemCode = (code: string) => credentials?.verify('code', code);

  return {
    enabled,
    issueCode: (account) => mint('code', account),
    redeemCode,
    grantToken(request) {
      if (request.grant_type !== 'authorization_code') {
        throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code');
      }
      if (request.code === undefined || request.code === '') {
        throw new OAuthError('invalid_request', 'code is required');
      }
      const grant = redeemCode(request.code);
      if (!grant) {
        throw new OAuthError('invalid_grant', 'authorization code is invalid or expired');
      }
      return {
        access_token: mint('token', grant.account),
        token_type: 'Bearer',
        expires_in: TOKEN_LIFETIME_SECONDS,
        scope: TOKEN_SCOPE,
      };
    },
    verifyAccessToken: (token) => credentials?.verify('token', token),
    profilesFor,
  };
}
