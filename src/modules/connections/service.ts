// Family connections (CONTRACT.md §7 connections rows, §7.3; spec: "Platform"): which
// platforms enforce a family's rules, with the credentials they need sealed at rest. A
// connection to the sandbox reference provider is completed with an authorization code from
// its consent flow, and then lists the child profiles the parent shared.
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../clock.js';
import type { AppEnv } from '../../config.js';
import type { Db } from '../../db/connect.js';
import { isUniqueViolation } from '../../db/errors.js';
import { findServiceSecret, loadServiceSecret } from '../../db/service-secrets.js';
import type { ChangeRunner } from '../../db/transaction-effects.js';
import {
  BadRequestError,
  ConflictError,
  requireVisible,
  ServiceUnavailableError,
} from '../../http/errors.js';
import { actorOf } from '../audit/actor.js';
import { REDACTED } from '../audit/changes.js';
import { type FamiliesService, tenantOf } from '../families/service.js';
import type { ChildProfile, SandboxOAuthProvider } from '../oauth/service.js';
import { missingCredential, refusalMessage } from '../partners/live-adapter.js';
import type { LivePartners } from '../partners/live-partners.js';
import { PartnerError } from '../partners/partner-http.js';
import { findPlatform } from '../platforms/catalog.js';
import { SANDBOX_PROVIDER_DID } from '../providers/service.js';
import { type CredentialCipher, createCredentialCipher } from './credential-cipher.js';
import {
  type ConnectionRow,
  type ConnectionStatus,
  deleteConnection,
  findConnection,
  findSealedCredentials,
  insertConnection,
  listConnections,
  listConnectionsRead,
  recordLastEnforcement,
  updateCredentials,
} from './store.js';

export interface ConnectionInput {
  platform_id: string;
  credentials?: Record<string, string>;
  authorization_code?: string;
}

const CONNECTION_NOT_FOUND = 'connection not found';

/**
 * What a connection's audit entry says it changed: the platform and the status are settings;
 * credentials and linked profiles are named without their values (a secret's value, even
 * redacted, never appears: only that one was stored).
 */
function connectionChanges(
  row: Pick<ConnectionRow, 'platform_id' | 'status'>,
  stored: { credentials: boolean; profiles: boolean },
): Record<string, unknown> {
  return {
    platform_id: row.platform_id,
    status: row.status,
    ...(stored.credentials ? { credentials: REDACTED } : {}),
    ...(stored.profiles ? { profiles: REDACTED } : {}),
  };
}

/** The service secret holding the key a sandbox without CREDENTIALS_KEY generated. */
const GENERATED_KEY = 'credentials-key';

/**
 * The key that seals credentials and webhook secrets: CREDENTIALS_KEY, or in the sandbox one
 * generated once and kept in the database. Production does not start without CREDENTIALS_KEY
 * (src/config.ts).
 */
export async function loadCredentialCipher(
  db: Db,
  options: { appEnv: AppEnv; credentialKeys: Buffer[] | undefined },
): Promise<CredentialCipher> {
  if (options.credentialKeys) {
    return createCredentialCipher(options.credentialKeys);
  }
  if (options.appEnv !== 'sandbox') {
    throw new Error('CREDENTIALS_KEY is required when APP_ENV=production');
  }
  return createCredentialCipher([await loadServiceSecret(db, GENERATED_KEY)]);
}

/** The key a sandbox generated before it was given CREDENTIALS_KEY, if it ever did. */
export function findGeneratedCredentialKey(db: Db): Promise<Buffer | undefined> {
  return findServiceSecret(db, GENERATED_KEY);
}

export function createConnectionsService(deps: {
  db: Db;
  clock: Clock;
  appEnv: AppEnv;
  families: Pick<FamiliesService, 'requireFamily' | 'visibleRows'>;
  cipher: CredentialCipher;
  sandboxOAuth: Pick<SandboxOAuthProvider, 'enabled' | 'redeemCode' | 'grantToken' | 'profilesFor'>;
  writes: ChangeRunner;
  livePartners: LivePartners;
}) {
  const { db, clock } = deps;

  /**
   * Credentials for a live partner must name every field it needs (400 naming the first one
   * missing); in production the partner is asked once, by a read of the profile, and a
   * refusal is a 400 with its reason, before anything is stored.
   */
  async function checkCredentials(platformId: string, credentials: Record<string, string>) {
    const partner = deps.livePartners.get(platformId);
    if (!partner) {
      return;
    }
    const missing = missingCredential(partner.definition, credentials);
    if (missing !== undefined) {
      throw new BadRequestError(
        `credentials.${missing} is required for ${platformId} (it needs ${partner.definition.credentialFields.join(', ')})`,
      );
    }
    if (deps.appEnv !== 'production') {
      return; // the sandbox enforces through its deterministic adapter; nothing to ask
    }
    try {
      await partner.check(credentials);
    } catch (error) {
      if (!(error instanceof PartnerError)) {
        throw error;
      }
      const profileId = credentials[partner.definition.credentialFields.at(-1) as string] ?? '';
      if (error.kind === 'unavailable') {
        throw new ServiceUnavailableError(
          `${partner.definition.name} could not be reached to check the credentials: ${error.message}`,
        );
      }
      throw new BadRequestError(refusalMessage(partner.definition, error, profileId));
    }
  }

  function seal(credentials: Record<string, string>, id: string) {
    return deps.cipher.seal(credentials, id);
  }

  function present(row: ConnectionRow) {
    return { ...row, profiles: row.profiles ?? [] };
  }

  /** The change's event, stated in the change (it commits with it): the Connection, no secrets. */
  function stated(type: 'connection.created' | 'connection.deleted', row: ConnectionRow) {
    const connection = present(row);
    return [
      {
        type,
        data: {
          ...connection,
          created_at: connection.created_at.toISOString(),
          updated_at: connection.updated_at.toISOString(),
          last_enforcement_at: connection.last_enforcement_at?.toISOString() ?? null,
        },
      },
    ];
  }

  /** Redeems a code of the sandbox provider: the profiles it shares and the token to keep. */
  function completeWithCode(platformId: string, code: string) {
    if (!deps.sandboxOAuth.enabled || platformId !== SANDBOX_PROVIDER_DID) {
      throw new BadRequestError(
        `authorization_code is accepted only for ${SANDBOX_PROVIDER_DID} on a sandbox deployment`,
      );
    }
    const grant = deps.sandboxOAuth.redeemCode(code);
    if (!grant) {
      throw new BadRequestError('authorization_code is invalid or expired');
    }
    const token = deps.sandboxOAuth.grantToken({ grant_type: 'authorization_code', code });
    return {
      profiles: deps.sandboxOAuth.profilesFor(grant.account),
      credentials: { access_token: token.access_token, scope: token.scope },
    };
  }

  /**
   * Connected when the platform can be enforced through: a catalog platform with what it
   * needs (in the sandbox its adapter needs no secret), or a completed provider flow. An
   * unknown platform_id is accepted but stays pending (CONTRACT.md §7.3).
   */
  function statusOf(
    platformId: string,
    hasCredentials: boolean,
    linked: boolean,
  ): ConnectionStatus {
    if (linked) {
      return 'connected';
    }
    const platform = findPlatform(platformId);
    if (!platform) {
      return 'pending';
    }
    if (platform.auth_type === 'manual' || hasCredentials || deps.appEnv === 'sandbox') {
      return 'connected';
    }
    return 'pending';
  }

  async function requireConnection(principal: Principal, id: string, access: 'read' | 'write') {
    return requireVisible(CONNECTION_NOT_FOUND, await findConnection(db, id), (connection) =>
      deps.families.requireFamily(principal, connection.family_id, access),
    );
  }

  return {
    async createConnection(principal: Principal, familyId: string, input: ConnectionInput) {
      await deps.families.requireFamily(principal, familyId, 'write');
      const linked =
        input.authorization_code === undefined
          ? undefined
          : completeWithCode(input.platform_id, input.authorization_code);
      const credentials = linked?.credentials ?? input.credentials;
      if (input.credentials !== undefined) {
        await checkCredentials(input.platform_id, input.credentials);
      }
      const id = randomUUID();
      const sealed = credentials === undefined ? undefined : seal(credentials, id);
      const now = clock.now();
      try {
        return present(
          await deps.writes.run(async (change) => {
            await insertConnection(change.trx, {
              id,
              family_id: familyId,
              platform_id: input.platform_id,
              status: statusOf(input.platform_id, sealed !== undefined, linked !== undefined),
              credentials: sealed?.sealed ?? null,
              credentials_key_id: sealed?.keyId ?? null,
              profiles: linked?.profiles ?? null,
              created_at: now,
              updated_at: now,
              last_enforcement_at: null,
              last_enforcement_status: null,
            });
            const created = (await findConnection(change.trx, id)) as ConnectionRow;
            change.emit(familyId, stated('connection.created', created));
            change.audit({
              familyId,
              actor: actorOf(principal),
              action: 'connection.created',
              target: { type: 'connection', id },
              changes: connectionChanges(created, {
                credentials: sealed !== undefined,
                profiles: linked !== undefined,
              }),
            });
            return created;
          }),
        );
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw new ConflictError('this platform is already connected to the family');
        }
        throw error;
      }
    },

    async listConnections(principal: Principal, familyId: string) {
      const result = await listConnectionsRead(db, familyId, tenantOf(principal));
      return deps.families.visibleRows(principal, result, 'id').map(present);
    },

    /**
     * New credentials for a connection (PATCH /connections/{id}): checked like a new
     * connection's, sealed in place of the old ones. A connection whose partner refused its
     * credentials is `connected` again.
     */
    async renewCredentials(principal: Principal, id: string, credentials: Record<string, string>) {
      const connection = await requireConnection(principal, id, 'write');
      await checkCredentials(connection.platform_id, credentials);
      const sealed = seal(credentials, id);
      const linked = (connection.profiles ?? []).length > 0;
      const status = statusOf(connection.platform_id, true, linked);
      const renewed = await deps.writes.run(async (change) => {
        await updateCredentials(change.trx, id, { sealed, status, at: clock.now() });
        change.audit({
          familyId: connection.family_id,
          actor: actorOf(principal),
          action: 'connection.credentials_renewed',
          target: { type: 'connection', id },
          changes: connectionChanges(
            { platform_id: connection.platform_id, status },
            { credentials: true, profiles: false },
          ),
        });
        return (await findConnection(change.trx, id)) as ConnectionRow;
      });
      return present(renewed);
    },

    async deleteConnection(principal: Principal, id: string): Promise<void> {
      const connection = await requireConnection(principal, id, 'write');
      await deps.writes.run(async (change) => {
        if (!(await deleteConnection(change.trx, id))) {
          return; // deleted meanwhile by another request: that one said so
        }
        change.emit(connection.family_id, stated('connection.deleted', connection));
        change.audit({
          familyId: connection.family_id,
          actor: actorOf(principal),
          action: 'connection.deleted',
          target: { type: 'connection', id },
          changes: { platform_id: connection.platform_id },
        });
      });
    },

    /** For the enforcement workers: the connection's credentials, unsealed. */
    async credentialsOf(connectionId: string): Promise<unknown> {
      const sealed = await findSealedCredentials(db, connectionId);
      if (!sealed) {
        return undefined;
      }
      return deps.cipher.open(
        { sealed: sealed.credentials, keyId: sealed.credentials_key_id },
        connectionId,
      );
    },

    /** For the enforcement worker (no caller: it holds a job): the family's connections. */
    /** `reader`: the transaction of a change that needs them (an event's listener). */
    async enforcementTargetsOf(familyId: string, reader: Db = db) {
      return (await listConnections(reader, familyId)).map(({ id, platform_id, status }) => ({
        id,
        platform_id,
        status,
      }));
    },

    /** For the enforcement worker, inside the transaction that finishes its job. */
    async recordEnforcement(
      outcomes: Array<{ connectionId: string; status: string; credentialsRefused: boolean }>,
      at: Date,
      executor: Db = db,
    ): Promise<void> {
      for (const outcome of outcomes) {
        await recordLastEnforcement(executor, outcome.connectionId, at, {
          status: outcome.status,
          // Refused: say so until renewed. Accepted again (the partner relented): connected.
          connection: outcome.credentialsRefused
            ? 'credentials_rejected'
            : outcome.status === 'success'
              ? 'connected'
              : undefined,
        });
      }
    },
  };
}

export type ConnectionsService = ReturnType<typeof createConnectionsService>;
export type { ChildProfile };
