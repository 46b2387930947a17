// MCP tokens: a user's credential for one family, for Model Context Protocol clients.
// Verified like API keys: by hash, from a short-lived cache dropped on revocation.
import { randomUUID } from 'node:crypto';
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
import { BadRequestError, NotFoundError } from '../../http/errors.js';
import type { FamiliesService } from '../families/service.js';
import {
  findMcpTokenByHash,
  insertMcpToken,
  listMcpTokens,
  type McpTokenRow,
  revokeMcpToken,
} from './store.js';

export type McpVerification =
  | { outcome: 'valid'; token: { id: string; userId: string; familyId: string } }
  | { outcome: 'invalid' };

export function createMcpTokensService(deps: {
  db: Db;
  clock: Clock;
  families: Pick<FamiliesService, 'mayBindMcpToken'>;
  bus: InvalidationBus;
}) {
  const { db, clock, bus } = deps;
  const cache = createSecretCache<Pick<McpTokenRow, 'id' | 'user_id' | 'family_id' | 'revoked_at'>>(
    {
      bus,
      channel: 'mcp-tokens',
      clock,
      load: async (tokenHash) => {
        const row = await findMcpTokenByHash(db, tokenHash);
        return (
          row && {
            id: row.id,
            user_id: row.user_id,
            family_id: row.family_id,
            revoked_at: row.revoked_at,
          }
        );
      },
    },
  );

  return {
    async createToken(userId: string, input: { family_id: string; label: string }) {
      const label = input.label.trim();
      if (label === '') {
        throw new BadRequestError('label is required');
      }
      // Not a member and no such family look the same: another user's family is invisible.
      if (!(await deps.families.mayBindMcpToken(userId, input.family_id))) {
        throw new NotFoundError('family not found');
      }
      const plain = generateSecret(SECRET_PREFIXES.mcpToken);
      const token: McpTokenRow = {
        id: randomUUID(),
        user_id: userId,
        family_id: input.family_id,
        label,
        token_prefix: displayPrefix(plain, SECRET_PREFIXES.mcpToken),
        token_hash: hashSecret(plain),
        last_used_at: null,
        created_at: clock.now(),
        revoked_at: null,
      };
      await insertMcpToken(db, token);
      return { token, plain };
    },

    listTokens: (userId: string) => listMcpTokens(db, userId),

    async revokeToken(userId: string, id: string): Promise<void> {
      const row = await revokeMcpToken(db, userId, id, clock.now());
      if (!row) {
        throw new NotFoundError('MCP token not found');
      }
      await cache.invalidate(row.token_hash);
    },

    async verifyToken(plain: string): Promise<McpVerification> {
      if (!isWellFormed(plain, SECRET_PREFIXES.mcpToken)) {
        return { outcome: 'invalid' };
      }
      const token = await cache.lookup(plain);
      if (!token) {
        return { outcome: 'invalid' };
      }
      if (token.revoked_at !== null) {
        return { outcome: 'invalid' };
      }
      return {
        outcome: 'valid',
        token: { id: token.id, userId: token.user_id, familyId: token.family_id },
      };
    },
  };
}

export type McpTokensService = ReturnType<typeof createMcpTokensService>;
