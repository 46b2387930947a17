// Developer API keys: minted for an org by its owners and admins, shown once, verified on
// every key-authenticated request from a short-lived cache. Minting, revoking and
// regenerating each state one entry on the org's audit chain (CONTRACT.md §12.1); verifying
// writes nothing.
import { randomUUID } from 'node:crypto';
import type { Environment, SessionPrincipal } from '../../auth/principal.js';
import { isScope, type Scope } from '../../auth/scopes.js';
import {
  displayPrefix,
  generateSecret,
  hashSecret,
  isWellFormed,
  SECRET_PREFIXES,
} from '../../auth/secrets.js';
import type { InvalidationBus } from '../../cache/invalidation-bus.js';
import { createSecretCache } from '../../cache/secret-cache.js';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import type { ChangeRunner } from '../../db/transaction-effects.js';
import {
  BadRequestError,
  ConflictError,
  NotFoundError,
  UnprocessableError,
} from '../../http/errors.js';
import { actorOf } from '../audit/actor.js';
import type { OrgsService } from '../orgs/service.js';
import {
  type ApiKeyRow,
  findApiKeyByHash,
  insertApiKey,
  listApiKeys,
  revokeApiKey,
} from './store.js';

export interface CreateKeyInput {
  name: string;
  environment: string;
  scopes?: string[];
  expires_at?: string;
}

export type KeyVerification =
  | { outcome: 'valid'; key: CachedKey & { scopes: Scope[] } }
  | { outcome: 'unknown' }
  | { outcome: 'revoked' }
  | { outcome: 'expired' };

const KEY_NOT_FOUND = 'API key not found';

function prefixFor(environment: Environment): string {
  return environment === 'live' ? SECRET_PREFIXES.liveKey : SECRET_PREFIXES.testKey;
}

function parseScopes(scopes: string[] | undefined): Scope[] {
  const unique = [...new Set(scopes ?? [])];
  for (const scope of unique) {
    if (!isScope(scope)) {
      throw new BadRequestError(`invalid scope requested: ${scope}`);
    }
  }
  return unique as Scope[];
}

export type ApiKeyWithSecret = ApiKeyRow & { key: string };

/** What a request needs to know about its key; the rest stays in the database. */
export type CachedKey = Pick<
  ApiKeyRow,
  'id' | 'org_id' | 'environment' | 'scopes' | 'expires_at' | 'revoked_at' | 'key_prefix'
>;

/** A test or live key's shape: anything else is no key, without a lookup. */
function isKeySecret(secret: string): boolean {
  return (
    isWellFormed(secret, SECRET_PREFIXES.testKey) || isWellFormed(secret, SECRET_PREFIXES.liveKey)
  );
}

/**
 * A key's settings as its audit entries show them: its name is the developer's label for it
 * and its prefix is shown anyway; the secret and its hash never appear.
 */
function keySettings(key: ApiKeyRow) {
  return {
    name: key.name,
    key_prefix: key.key_prefix,
    environment: key.environment,
    scopes: key.scopes,
    expires_at: key.expires_at?.toISOString() ?? null,
  };
}

export function createApiKeysService(deps: {
  db: Db;
  clock: Clock;
  orgs: Pick<OrgsService, 'requireMember' | 'requireManager'>;
  bus: InvalidationBus;
  writes: ChangeRunner;
}) {
  const { db, clock } = deps;
  const cache = createSecretCache<CachedKey>({
    bus: deps.bus,
    channel: 'api-keys',
    clock,
    load: async (keyHash) => {
      const row = await findApiKeyByHash(db, keyHash);
      if (!row) {
        return undefined;
      }
      const { id, org_id, environment, scopes, expires_at, revoked_at, key_prefix } = row;
      return { id, org_id, environment, scopes, expires_at, revoked_at, key_prefix };
    },
  });

  function standingOf(key: CachedKey): 'revoked' | 'expired' | 'valid' {
    if (key.revoked_at !== null) {
      return 'revoked';
    }
    if (key.expires_at !== null && key.expires_at.getTime() <= clock.now().getTime()) {
      return 'expired';
    }
    return 'valid';
  }

  function mint(
    template: Pick<ApiKeyRow, 'org_id' | 'name' | 'environment' | 'scopes' | 'expires_at'>,
    createdBy: string,
  ): ApiKeyWithSecret {
    const prefix = prefixFor(template.environment);
    const secret = generateSecret(prefix);
    return {
      ...template,
      id: randomUUID(),
      created_by: createdBy,
      key_prefix: displayPrefix(secret, prefix),
      key_hash: hashSecret(secret),
      revoked_at: null,
      last_used_at: null,
      last_used_ip: null,
      created_at: clock.now(),
      key: secret,
    };
  }

  function withoutSecret(row: ApiKeyWithSecret): ApiKeyRow {
    const { key: _secret, ...stored } = row;
    return stored;
  }

  return {
    async createKey(caller: SessionPrincipal, orgId: string, input: CreateKeyInput) {
      const { userId } = caller;
      await deps.orgs.requireManager(orgId, userId);
      const name = input.name.trim();
      if (name === '') {
        throw new BadRequestError('name is required');
      }
      if (input.environment !== 'test' && input.environment !== 'live') {
        throw new BadRequestError("environment must be 'live' or 'test'");
      }
      const scopes = parseScopes(input.scopes);
      let expiresAt: Date | null = null;
      if (input.expires_at !== undefined) {
        expiresAt = new Date(input.expires_at);
        if (expiresAt.getTime() <= clock.now().getTime()) {
          throw new UnprocessableError('expires_at must be in the future');
        }
      }
      const row = mint(
        { org_id: orgId, name, environment: input.environment, scopes, expires_at: expiresAt },
        userId,
      );
      await deps.writes.run(async (change) => {
        await insertApiKey(change.trx, withoutSecret(row));
        change.audit({
          orgId,
          actor: actorOf(caller),
          action: 'api_key.created',
          target: { type: 'api_key', id: row.id },
          changes: keySettings(row),
        });
      });
      return row;
    },

    async listKeys(userId: string, orgId: string): Promise<ApiKeyRow[]> {
      await deps.orgs.requireMember(orgId, userId);
      return listApiKeys(db, orgId);
    },

    /**
     * 204 again when already revoked: deleting is idempotent, and only the call that revoked
     * it states an entry (the others changed nothing).
     */
    async revokeKey(caller: SessionPrincipal, orgId: string, keyId: string): Promise<void> {
      await deps.orgs.requireManager(orgId, caller.userId);
      const revoked = await deps.writes.run(async (change) => {
        const result = await revokeApiKey(change.trx, orgId, keyId, clock.now());
        if (result?.revokedNow) {
          change.audit({
            orgId,
            actor: actorOf(caller),
            action: 'api_key.revoked',
            target: { type: 'api_key', id: keyId },
            changes: {},
          });
        }
        return result;
      });
      if (!revoked) {
        throw new NotFoundError(KEY_NOT_FOUND);
      }
      await cache.invalidate(revoked.row.key_hash);
    },

    /** A new key with the old one's name, environment, scopes and expiry; the old one dies. */
    async regenerateKey(caller: SessionPrincipal, orgId: string, keyId: string) {
      const { userId } = caller;
      await deps.orgs.requireManager(orgId, userId);
      const now = clock.now();
      const result = await deps.writes.run(async (change) => {
        const { trx } = change;
        const old = await trx
          .selectFrom('developer_api_keys')
          .selectAll()
          .where('org_id', '=', orgId)
          .where('id', '=', keyId)
          .forUpdate()
          .executeTakeFirst();
        if (!old) {
          throw new NotFoundError(KEY_NOT_FOUND);
        }
        if (old.revoked_at !== null) {
          throw new ConflictError('API key has been revoked; create a new key instead');
        }
        if (old.expires_at !== null && old.expires_at.getTime() <= now.getTime()) {
          throw new ConflictError('API key has expired; create a new key instead');
        }
        const fresh = mint(old, userId);
        await revokeApiKey(trx, orgId, keyId, now);
        await insertApiKey(trx, withoutSecret(fresh));
        // One change, one entry: the new key, naming the one it replaces.
        change.audit({
          orgId,
          actor: actorOf(caller),
          action: 'api_key.regenerated',
          target: { type: 'api_key', id: fresh.id },
          changes: { replaces: keyId, ...keySettings(fresh) },
        });
        return { fresh, oldHash: old.key_hash };
      });
      await cache.invalidate(result.oldHash);
      return result.fresh;
    },

    /**
     * The key of a presented secret when it is in memory now and valid (never loads, never
     * waits): what the keyed catalog read's fast path needs. Anything else is the route's.
     */
    knownKey(secret: string): CachedKey | undefined {
      const key = isKeySecret(secret) ? cache.peek(secret) : undefined;
      return key && standingOf(key) === 'valid' ? key : undefined;
    },

    /** The outcome for a presented secret; the auth plugin turns it into 401/403. */
    async verifyKey(secret: string): Promise<KeyVerification> {
      if (!isKeySecret(secret)) {
        return { outcome: 'unknown' };
      }
      const key = await cache.lookup(secret);
      if (!key) {
        return { outcome: 'unknown' };
      }
      const standing = standingOf(key);
      if (standing !== 'valid') {
        return { outcome: standing };
      }
      return { outcome: 'valid', key: { ...key, scopes: key.scopes as Scope[] } };
    },
  };
}

export type ApiKeysService = ReturnType<typeof createApiKeysService>;
