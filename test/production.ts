// What a production deployment must be given (CONTRACT.md §1, §9): an identity provider, the
// steward's key and the key that seals credentials and webhook secrets. Tests that build a
// production app start from this.
import { generateKeyPairSync, randomBytes } from 'node:crypto';

/** An Ed25519 steward key (PKCS#8 PEM), one per test process. */
export const STEWARD_KEY_PEM = generateKeyPairSync('ed25519')
  .privateKey.export({ format: 'pem', type: 'pkcs8' })
  .toString();

/** A CREDENTIALS_KEY, one per test process. */
export const CREDENTIALS_KEY = randomBytes(32).toString('base64');

export function productionEnv(auth: { jwksUrl?: string; issuer?: string } = {}) {
  return {
    APP_ENV: 'production',
    AUTH_JWKS_URL: auth.jwksUrl ?? 'http://127.0.0.1:9/jwks.json',
    AUTH_ISSUER: auth.issuer ?? 'https://id.example',
    OCSS_STEWARD_KEY: STEWARD_KEY_PEM,
    CREDENTIALS_KEY,
  };
}
