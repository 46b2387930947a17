// The federation's own signing keys: the steward's (OCSS_STEWARD_KEY, or in the sandbox one
// generated at first start and kept in the database) and those of the seeded sandbox
// providers, generated the same way so they are identical on every restart.
import type { Config } from '../../config.js';
import type { Db } from '../../db/connect.js';
import { loadServiceSecret } from '../../db/service-secrets.js';
import {
  type Ed25519SigningKey,
  exportPrivateKeyPem,
  generateSigningKey,
  loadSigningKeyPem,
} from '../../ocss/ed25519-key.js';

async function generatedPem(): Promise<string> {
  return exportPrivateKeyPem(await generateSigningKey());
}

/** A key kept under `name` in service_secrets, made once per deployment. */
export async function storedSigningKey(db: Db, name: string): Promise<Ed25519SigningKey> {
  // loadServiceSecret's generator is synchronous; a PEM made ahead is discarded if another
  // process stored one first.
  const candidate = Buffer.from(await generatedPem());
  const pem = await loadServiceSecret(db, name, () => candidate);
  return loadSigningKeyPem(pem.toString('utf8'));
}

export async function loadStewardKey(
  db: Db,
  config: Pick<Config, 'stewardKeyPem' | 'appEnv'>,
): Promise<Ed25519SigningKey> {
  if (config.stewardKeyPem) {
    return loadSigningKeyPem(config.stewardKeyPem);
  }
  if (config.appEnv !== 'sandbox') {
    // loadConfig refuses this already; kept so no path signs with a throwaway key.
    throw new Error('OCSS_STEWARD_KEY is required outside the sandbox');
  }
  return storedSigningKey(db, 'ocss-steward-key');
}
