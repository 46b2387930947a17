// The built-in development issuer: on a sandbox deployment without an identity provider,
// Haven signs its own RS256 session tokens, so that sessions take the very same verification
// path as in production (JWKS, kid, RS256, iss, exp). Its key lives in the database.
import { createPrivateKey, generateKeyPairSync, type KeyObject, randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, type JSONWebKeySet, SignJWT } from 'jose';
import type { Clock } from '../clock.js';
import type { Db } from '../db/connect.js';
import { type DevIssuerKey, findKey, insertKeyIfAbsent } from './dev-issuer-store.js';

export const DEV_ISSUER = 'haven-sandbox-dev-issuer';
const DEFAULT_TTL_SECONDS = 3600;

export interface MintInput {
  subject?: string;
  email?: string;
  name?: string;
  ttlSeconds?: number;
}

export interface DevIssuer {
  issuer: string;
  jwks(): JSONWebKeySet;
  mint(
    input?: MintInput,
  ): Promise<{ token: string; subject: string; expiresAt: Date; expiresIn: number }>;
}

async function newKey(createdAt: Date): Promise<DevIssuerKey> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  // Only the public members are kept: the private key lives in the PEM column alone.
  const { kty, n, e } = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint({ kty, n, e });
  return {
    kid,
    private_key_pem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    public_jwk: { kty, n, e, kid, alg: 'RS256', use: 'sig' },
    created_at: createdAt,
  };
}

export async function loadDevIssuer(db: Db, options: { clock: Clock }): Promise<DevIssuer> {
  let stored = await findKey(db);
  if (!stored) {
    // Two processes may get here at once: the first insert wins, and both read that one back.
    await insertKeyIfAbsent(db, await newKey(options.clock.now()));
    stored = await findKey(db);
  }
  if (!stored) {
    throw new Error('the development issuer key could not be stored');
  }
  const { kid } = stored;
  const privateKey: KeyObject = createPrivateKey(stored.private_key_pem);
  const publicJwk = stored.public_jwk;

  return {
    issuer: DEV_ISSUER,
    jwks: () => ({ keys: [{ ...publicJwk }] }),
    async mint(input = {}) {
      const subject = input.subject ?? randomUUID();
      const now = Math.floor(options.clock.now().getTime() / 1000);
      const expiresIn = input.ttlSeconds ?? DEFAULT_TTL_SECONDS;
      const expires = now + expiresIn;
      const token = await new SignJWT({
        email: input.email ?? `${subject.slice(0, 8)}@sandbox.haven.test`,
        name: input.name ?? 'Sandbox Developer',
      })
        .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
        .setIssuer(DEV_ISSUER)
        .setSubject(subject)
        .setIssuedAt(now)
        .setNotBefore(now)
        .setExpirationTime(expires)
        .sign(privateKey);
      return { token, subject, expiresAt: new Date(expires * 1000), expiresIn };
    },
  };
}
