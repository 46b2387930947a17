// Session bearers: RS256 JWTs from an identity provider, checked against its key set
// (CONTRACT.md §2). Every failure reads the same, `invalid or expired token`: a caller learns
// nothing about which check failed, and the token never appears in a message or log.
import { createRemoteJWKSet, type JWTVerifyGetKey, jwtVerify } from 'jose';
import type { Clock } from '../clock.js';
import { UnauthorizedError } from '../http/errors.js';

export interface SessionClaims {
  issuer: string;
  subject: string;
  email: string;
  name: string;
}

export interface SessionVerifier {
  verify(token: string): Promise<SessionClaims>;
}

const INVALID = 'invalid or expired token';
/** Leeway for `exp` and `nbf`: clocks of the provider and of Haven never agree exactly. */
const CLOCK_TOLERANCE_SECONDS = 30;
/** Longer than any real JWT; anything bigger is refused before parsing. */
const MAX_TOKEN_LENGTH = 16_384;

/** The provider's key set over HTTP: cached, re-fetched when a token names an unknown kid. */
export function remoteKeySet(
  jwksUrl: string,
  options: { cooldownMs?: number } = {},
): JWTVerifyGetKey {
  return createRemoteJWKSet(new URL(jwksUrl), {
    timeoutDuration: 5_000,
    // A new kid is looked up at most every 30 s (so unknown kids cannot make Haven hammer the
    // provider); known keys are re-read every 10 minutes.
    cooldownDuration: options.cooldownMs ?? 30_000,
    cacheMaxAge: 600_000,
  });
}

export function createSessionVerifier(options: {
  keySet: JWTVerifyGetKey;
  issuer?: string;
  audience?: string;
  clock: Clock;
}): SessionVerifier {
  return {
    async verify(token) {
      if (token.length > MAX_TOKEN_LENGTH) {
        throw new UnauthorizedError(INVALID);
      }
      try {
        const { payload } = await jwtVerify(token, options.keySet, {
          algorithms: ['RS256'],
          issuer: options.issuer,
          audience: options.audience,
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
          currentDate: options.clock.now(),
          requiredClaims: ['sub', 'exp'],
        });
        if (
          typeof payload.sub !== 'string' ||
          payload.sub === '' ||
          typeof payload.iss !== 'string'
        ) {
          throw new Error('sub and iss must be non-empty strings');
        }
        return {
          issuer: payload.iss,
          subject: payload.sub,
          email: typeof payload.email === 'string' ? payload.email : '',
          name: typeof payload.name === 'string' ? payload.name : '',
        };
      } catch {
        throw new UnauthorizedError(INVALID);
      }
    },
  };
}
