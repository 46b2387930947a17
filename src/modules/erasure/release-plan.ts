// What an erasure must release, decided inside its transaction while the family's connections
// and their records still exist (CONTRACT.md §11.4, §12.3): per connection, whether there is
// anything to take back, and for the ones that need a run, exactly what that run needs, which
// the erasure then seals into its job (the rows it came from are deleted by the same change).
import type { Db } from '../../db/connect.js';
import type { CredentialCipher } from '../connections/credential-cipher.js';
import type { AdapterRegistry } from '../enforcement/adapter-registry.js';
import type { PartnerCredentials } from '../partners/live-adapter.js';
import type { LivePartners } from '../partners/live-partners.js';
import type { ManagedState } from '../partners/managed-state-store.js';
import { connectionsToRelease, type ReleaseOutcome } from './store.js';

/** One connection's release, as the job runs it. */
export interface ReleaseWork {
  connection_id: string;
  platform_id: string;
  /** A live partner's: the credentials, and the record of what Haven applied there. */
  partner?: { credentials: PartnerCredentials; state: ManagedState };
}

/** The plaintext of an erasure's sealed release material. */
export interface SealedReleases {
  family_id: string;
  /** The erased child (null for a family's erasure). */
  child_id: string | null;
  work: ReleaseWork[];
}

export interface ReleasePlan {
  /** The receipt's list, one per connection: `pending` for the ones the job runs. */
  releases: ReleaseOutcome[];
  work: ReleaseWork[];
  /** Until when a run holds one of the profiles: the release starts after it. */
  busyUntil: Date | undefined;
}

const isEmpty = (state: ManagedState) =>
  state.items.length === 0 && Object.keys(state.settings).length === 0;

export async function planReleases(
  db: Db,
  deps: {
    cipher: CredentialCipher;
    adapters: AdapterRegistry;
    livePartners: LivePartners;
    now: Date;
    staleSeconds: number;
  },
  familyId: string,
): Promise<ReleasePlan> {
  const plan: ReleasePlan = { releases: [], work: [], busyUntil: undefined };
  const connections = await connectionsToRelease(db, familyId, deps);
  for (const connection of connections) {
    const outcome = (status: ReleaseOutcome['status']) =>
      plan.releases.push({ platform_id: connection.platform_id, status });
    const resolved = deps.adapters.resolve(connection.platform_id);
    // Nothing was ever applied through a platform without an adapter, or a pending connection.
    if (resolved.kind === 'unsupported' || connection.status === 'pending') {
      outcome('skipped');
      continue;
    }
    const work: ReleaseWork = {
      connection_id: connection.id,
      platform_id: connection.platform_id,
    };
    const partner = deps.livePartners.get(connection.platform_id);
    if (partner && resolved.adapter === partner) {
      const credentials =
        connection.credentials && connection.credentials_key_id
          ? (deps.cipher.open(
              { sealed: connection.credentials, keyId: connection.credentials_key_id },
              connection.id,
            ) as PartnerCredentials)
          : undefined;
      const state = connection.state;
      if (!state || isEmpty(state)) {
        outcome('skipped');
        continue;
      }
      if (!credentials) {
        outcome('failed'); // Haven applied something and holds nothing to take it back with
        continue;
      }
      // The record describes the profile the credentials name (new credentials naming another
      // profile start a new record): an older profile's cannot be reached any more.
      if (
        connection.profile_id !== credentials[partner.definition.credentialFields.at(-1) as string]
      ) {
        outcome('skipped');
        continue;
      }
      work.partner = { credentials, state };
    }
    // Any other adapter (the sandbox's, the device agent's) runs its own release in the job.
    outcome('pending');
    plan.work.push(work);
    if (connection.busy_until && (!plan.busyUntil || connection.busy_until > plan.busyUntil)) {
      plan.busyUntil = connection.busy_until;
    }
  }
  return plan;
}
