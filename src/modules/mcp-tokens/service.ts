// MCP tokens: a user's credential for one family, for Model Context Protocol clients.
// Verified like API keys: by hash, from a short-lived cache dropped on revocation.
import { randomUUID } from 'node:crypto';
import type { SessionPrincipal } from '../../auth/principal.js';
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
import type { Change, ChangeRunner } from '../../db/transaction-effects.js';
import { BadRequestError, NotFoundError } from '../../http/errors.js';
import { actorOf } from '../audit/actor.js';
import { REDACTED } from '../audit/changes.js';
import { DEMO_FAMILY_ID } from '../demo/demo-family.js';
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
  writes: ChangeRunner;
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

  /**
   * The token's entry on its family's chain (the family it acts on). The label is a name a
   * person gave: named, not kept. A token bound to the sandbox's shared demo family writes
   * none: every sandbox caller reads that family's log, and the demo family itself does not
   * change (docs/decisions.md "MCP tokens on the family's chain").
   */
  function audit(
    change: Change,
    caller: SessionPrincipal,
    token: Pick<McpTokenRow, 'id' | 'family_id'>,
    action: 'mcp_token.created' | 'mcp_token.revoked',
    changes: Record<string, unknown>,
  ): void {
    if (token.family_id === DEMO_FAMILY_ID) {
      return;
    }
    change.audit({
      familyId: token.family_id,
      actor: actorOf(caller),
      action,
      target: { type: 'mcp_token', id: token.id },
      changes,
    });
  }

  return {
    async createToken(caller: SessionPrincipal, input: { family_id: string; label: string }) {
      const { userId } = caller;
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
      await deps.writes.run(async (change) => {
        await insertMcpToken(change.trx, token);
        audit(change, caller, token, 'mcp_token.created', { label: REDACTED });
      });
      return { token, plain };
    },

    listTokens: (userId: string) => listMcpTokens(db, userId),

    async revokeToken(caller: SessionPrincipal, id: string): Promise<void> {
      const row = await deps.writes.run(async (change) => {
        const revoked = await revokeMcpToken(change.trx, caller.userId, id, clock.now());
        // Revoking again changes nothing: no second entry.
        if (revoked?.revokedNow) {
          audit(change, caller, revoked, 'mcp_token.revoked', { revoked: true });
        }
        return revoked;
      });
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
