// Which session tokens this deployment trusts: the identity provider's (AUTH_JWKS_URL), or,
// on a sandbox without one, the built-in development issuer's, checked the same way.
import { createLocalJWKSet } from 'jose';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Db } from '../db/connect.js';
import { type DevIssuer, loadDevIssuer } from './dev-issuer.js';
import { createSessionVerifier, remoteKeySet, type SessionVerifier } from './session-verifier.js';

export interface SessionAuthority {
  verifier: SessionVerifier;
  devIssuer: DevIssuer | undefined;
}

export async function createSessionAuthority(
  config: Pick<Config, 'appEnv' | 'authJwksUrl' | 'authIssuer' | 'authAudience'>,
  db: Db,
  clock: Clock,
): Promise<SessionAuthority> {
  if (config.authJwksUrl) {
    return {
      verifier: createSessionVerifier({
        keySet: remoteKeySet(config.authJwksUrl),
        issuer: config.authIssuer,
        audience: config.authAudience,
        clock,
      }),
      devIssuer: undefined,
    };
  }
  // Config already refuses production without AUTH_JWKS_URL; this guard keeps a self-signing
  // issuer out of production even if that check is ever loosened.
  if (config.appEnv !== 'sandbox') {
    throw new Error('AUTH_JWKS_URL is required outside APP_ENV=sandbox');
  }
  const devIssuer = await loadDevIssuer(db, { clock });
  return {
    verifier: createSessionVerifier({
      keySet: createLocalJWKSet(devIssuer.jwks()),
      issuer: devIssuer.issuer,
      clock,
    }),
    devIssuer,
  };
}
