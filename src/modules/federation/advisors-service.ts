// Advisors of the OCSS federation (spec: "Advisor self-registration", "AdvisorRegistration";
// CONTRACT.md §9). Registration is create-only and concurrency-safe (the DID is the primary
// key: of two simultaneous registrations one inserts, the other gets 409), every entry starts
// `provisional`, and the trust list is re-issued after each change. An org's registration
// and an operator's change to an org's advisor state one entry on the org's audit chain
// (CONTRACT.md §12.1); a self-registration belongs to no org and has no chain
// (docs/decisions.md "Control-plane writes without a chain").
import { randomUUID } from 'node:crypto';
import type { SessionPrincipal } from '../../auth/principal.js';
import type { Clock } from '../../clock.js';
import { DID_PATTERN } from '../../config.js';
import type { Db } from '../../db/connect.js';
import type { ChangeRunner } from '../../db/transaction-effects.js';
import { BadRequestError, ConflictError, NotFoundError } from '../../http/errors.js';
import { parsePublicKeyRaw, parsePublicKeySpkiPem } from '../../ocss/ed25519-key.js';
import { keyIdFor, publicJwkFor } from '../../ocss/public-jwk.js';
import { actorOf, systemActor } from '../audit/actor.js';
import { auditChanges } from '../audit/changes.js';
import type { FamiliesService } from '../families/service.js';
import type { OrgsService } from '../orgs/service.js';
import { findOrgRegistration, insertOrgAdvisor, listOrgAdvisors } from './advisors-store.js';
import {
  type EntryRow,
  type EntryStatus,
  type EntryTier,
  insertEntry,
  updateEntry,
} from './entries-store.js';
import type { TrustListService } from './trust-list-service.js';

export const ADVISOR_ROLES = ['advisor', 'editor', 'reviewer', 'observer'] as const;

/** Each capability domain and the lowest tier band that may hold it. */
export const CAPABILITY_BANDS = {
  herald: 'provisional',
  lens: 'provisional',
  bearing: 'provisional',
  threshold: 'verified',
  verdict: 'verified',
  notary: 'verified',
  aegis: 'accredited',
  custody: 'accredited',
} as const;

const BAND_ORDER = ['provisional', 'verified', 'accredited'] as const;

export interface SelfRegistration {
  did?: string;
  public_key_b64url: string;
  roles?: string[];
}

export interface OrgAdvisorRegistration {
  slug: string;
  display_name: string;
  public_key_pem: string;
  key_id: string;
  scope: 'family' | 'global';
  publisher_org?: string;
  callback_url?: string;
  capability_domains?: string[];
  scope_family_id?: string | null;
  manifest_url?: string | null;
}

/** Where an org's advisor points: URLs, named in its audit entries, never valued. */
const ADVISOR_PERSONAL_FIELDS = ['manifest_url', 'callback_url'] as const;

/**
 * An operator's promotion, suspension or revocation of a trust-list entry (`npm run admin`),
 * with its entry on the org's chain when an org registered the DID. False: no such entry.
 */
export async function changeTrustListEntry(
  deps: { writes: ChangeRunner; clock: Clock },
  did: string,
  changes: { tier?: EntryTier; status?: EntryStatus },
): Promise<boolean> {
  return deps.writes.run(async (change) => {
    if (!(await updateEntry(change.trx, did, changes, deps.clock.now()))) {
      return false;
    }
    const registration = await findOrgRegistration(change.trx, did);
    if (registration) {
      change.audit({
        orgId: registration.org_id,
        actor: systemActor('operator'),
        action: changes.status !== undefined ? 'advisor.status_changed' : 'advisor.tier_changed',
        target: { type: 'advisor', id: registration.id },
        changes: auditChanges(changes),
      });
    }
    return true;
  });
}

function checkDid(did: string): void {
  if (!did.startsWith('did:ocss:')) {
    throw new BadRequestError('invalid_did: must start with did:ocss:');
  }
  if (!DID_PATTERN.test(did)) {
    throw new BadRequestError(
      'invalid_did: the name after did:ocss: must be 1-64 characters of a-z 0-9 . _ -',
    );
  }
}

function checkRoles(roles: string[]): string[] {
  for (const role of roles) {
    if (!(ADVISOR_ROLES as readonly string[]).includes(role)) {
      throw new BadRequestError(`unknown_role: ${role}`);
    }
  }
  return [...new Set(roles)];
}

function rawPublicKey(b64url: string) {
  const length = Buffer.from(b64url, 'base64url').length;
  if (length !== 32) {
    throw new BadRequestError(`invalid_public_key_b64url: must decode to 32 bytes, got ${length}`);
  }
  try {
    return parsePublicKeyRaw(b64url);
  } catch {
    throw new BadRequestError('invalid_public_key_b64url: not canonical unpadded base64url');
  }
}

function httpsUrl(value: string | null | undefined, field: string, when = ''): string | null {
  if (value === undefined || value === null) {
    return null;
  }
  try {
    if (new URL(value).protocol === 'https:') {
      return value;
    }
  } catch {
    // below
  }
  throw new BadRequestError(`${field} must be an https URL${when}`);
}

/** Unknown names are refused; known names above the provisional band are dropped. */
function acceptedCapabilities(names: string[]): string[] {
  const accepted: string[] = [];
  for (const name of names) {
    const band = CAPABILITY_BANDS[name as keyof typeof CAPABILITY_BANDS];
    if (!band) {
      throw new BadRequestError(`unknown_capability: ${name}`);
    }
    if (BAND_ORDER.indexOf(band) <= BAND_ORDER.indexOf('provisional') && !accepted.includes(name)) {
      accepted.push(name);
    }
  }
  return accepted;
}

export function createAdvisorsService(deps: {
  db: Db;
  clock: Clock;
  trustList: Pick<TrustListService, 'reissue'>;
  orgs: Pick<OrgsService, 'requireManager' | 'requireMember'>;
  families: Pick<FamiliesService, 'requireFamily'>;
  writes: ChangeRunner;
}) {
  const { db, clock } = deps;

  return {
    async selfRegister(input: SelfRegistration) {
      if (input.did === undefined) {
        throw new BadRequestError('did is required');
      }
      checkDid(input.did);
      const publicKey = rawPublicKey(input.public_key_b64url);
      const roles = checkRoles(input.roles ?? ['advisor']);
      const jwk = await publicJwkFor(publicKey);
      const now = clock.now();
      const entry: EntryRow = {
        did: input.did,
        entity: 'advisor',
        display_name: input.did,
        roles,
        tier: 'provisional',
        status: 'active',
        public_jwk: jwk,
        key_id: keyIdFor(input.did, jwk.kid),
        registered_at: now,
        updated_at: now,
      };
      if (!(await insertEntry(db, entry))) {
        throw new ConflictError('did is already on the trust list');
      }
      await deps.trustList.reissue();
      return {
        did: entry.did,
        key_id: entry.key_id,
        tier: 'provisional' as const,
        status: 'active' as const,
        roles: entry.roles,
        registered_at: now,
      };
    },

    async registerForOrg(caller: SessionPrincipal, orgId: string, input: OrgAdvisorRegistration) {
      const { userId } = caller;
      await deps.orgs.requireManager(orgId, userId);
      let publicKey: ReturnType<typeof parsePublicKeySpkiPem>;
      try {
        publicKey = parsePublicKeySpkiPem(input.public_key_pem);
      } catch {
        throw new BadRequestError('invalid public_key_pem');
      }
      const capabilities = acceptedCapabilities(input.capability_domains ?? []);
      let scopeFamilyId: string | null = null;
      let manifestUrl: string | null = null;
      if (input.scope === 'family') {
        if (!input.scope_family_id) {
          throw new BadRequestError('scope_family_id is required when scope is family');
        }
        await deps.families.requireFamily({ kind: 'user', userId }, input.scope_family_id, 'read');
        scopeFamilyId = input.scope_family_id;
      } else {
        if (!input.manifest_url) {
          throw new BadRequestError('manifest_url is required when scope is global');
        }
        manifestUrl = httpsUrl(input.manifest_url, 'manifest_url', ' when scope is global');
      }
      const callbackUrl = httpsUrl(input.callback_url, 'callback_url');
      const did = `did:ocss:${input.slug}`;
      const jwk = await publicJwkFor(publicKey);
      const now = clock.now();
      const advisor = {
        id: randomUUID(),
        org_id: orgId,
        slug: input.slug,
        did,
        display_name: input.display_name.trim(),
        scope: input.scope,
        scope_family_id: scopeFamilyId,
        manifest_url: manifestUrl,
        publisher_org: input.publisher_org ?? null,
        callback_url: callbackUrl,
        capability_domains: capabilities,
        created_at: now,
      };
      const entry: EntryRow = {
        did,
        entity: 'advisor',
        display_name: advisor.display_name,
        roles: ['advisor'],
        tier: 'provisional',
        status: 'active',
        public_jwk: jwk,
        key_id: keyIdFor(did, jwk.kid),
        registered_at: now,
        updated_at: now,
      };
      await deps.writes.run(async (change) => {
        if (!(await insertOrgAdvisor(change.trx, advisor, entry))) {
          // Thrown inside the change: an entry already written is rolled back with it.
          throw new ConflictError('slug is already registered');
        }
        change.audit({
          orgId,
          actor: actorOf(caller),
          action: 'advisor.registered',
          target: { type: 'advisor', id: advisor.id },
          changes: auditChanges(
            {
              slug: advisor.slug,
              did: advisor.did,
              key_id: entry.key_id,
              display_name: advisor.display_name,
              scope: advisor.scope,
              scope_family_id: advisor.scope_family_id,
              manifest_url: advisor.manifest_url ?? undefined,
              publisher_org: advisor.publisher_org ?? undefined,
              callback_url: advisor.callback_url ?? undefined,
              capability_domains: advisor.capability_domains,
              tier: entry.tier,
              status: entry.status,
            },
            ADVISOR_PERSONAL_FIELDS,
          ),
        });
      });
      await deps.trustList.reissue();
      return { ...advisor, key_id: entry.key_id, tier: entry.tier, status: entry.status };
    },

    async listForOrg(userId: string, orgId: string) {
      await deps.orgs.requireMember(orgId, userId);
      return listOrgAdvisors(db, orgId);
    },

    /** Operator commands: promote, suspend or revoke an entry; re-issues the trust list. */
    async setEntry(did: string, changes: { tier?: EntryTier; status?: EntryStatus }) {
      if (!(await changeTrustListEntry(deps, did, changes))) {
        throw new NotFoundError(`no trust-list entry for ${did}`);
      }
      return deps.trustList.reissue();
    },
  };
}

export type AdvisorsService = ReturnType<typeof createAdvisorsService>;
