// The entries every deployment starts with (CONTRACT.md §9): the steward (verified), the
// sandbox reference provider (verified, sandbox only) and a verified provider that never
// published a connect config (its connect route answers 404 "not available").
import type { AppEnv } from '../../config.js';
import type { Db } from '../../db/connect.js';
import type { Ed25519SigningKey } from '../../ocss/ed25519-key.js';
import { keyIdFor } from '../../ocss/public-jwk.js';
import { SANDBOX_PROVIDER_DID, UNCONFIGURED_PROVIDER_DID } from '../providers/service.js';
import { type EntryRow, insertEntry, seedEntry } from './entries-store.js';
import { storedSigningKey } from './keys.js';

const SEEDED_AT = new Date('2026-01-01T00:00:00.000Z');

function entry(
  did: string,
  entity: EntryRow['entity'],
  displayName: string,
  key: Ed25519SigningKey,
): EntryRow {
  return {
    did,
    entity,
    display_name: displayName,
    roles: [entity],
    tier: 'verified',
    status: 'active',
    public_jwk: key.publicJwk,
    key_id: keyIdFor(did, key.kid),
    registered_at: SEEDED_AT,
    updated_at: SEEDED_AT,
  };
}

export async function seedFederation(
  db: Db,
  options: { appEnv: AppEnv; steward: Ed25519SigningKey; stewardDid: string },
): Promise<void> {
  // Created once; which key it publishes is the issuer's business (trust-list-service
  // pins it to the signing key under the issue lock, so concurrent starts agree).
  await insertEntry(db, entry(options.stewardDid, 'steward', 'Haven steward', options.steward));
  const providers: Array<[string, string]> = [
    [UNCONFIGURED_PROVIDER_DID, 'Sandbox Unconfigured Provider'],
  ];
  if (options.appEnv === 'sandbox') {
    providers.push([SANDBOX_PROVIDER_DID, 'Haven Sandbox Provider']);
  }
  for (const [did, name] of providers) {
    const key = await storedSigningKey(db, `ocss-entity-key:${did}`);
    await seedEntry(db, entry(did, 'provider', name, key));
  }
}
