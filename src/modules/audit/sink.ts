// The audit log as a sink of every change (db/transaction-effects.ts): the entries a change
// stated are appended to their chains inside the change's transaction, so a change and its
// entry commit together or not at all.
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../clock.js';
import type { EffectSink, StatedAuditEntry } from '../../db/transaction-effects.js';
import { appendToChain, type Chain } from './store.js';

function chainOf(entry: StatedAuditEntry): Chain {
  if (entry.familyId) {
    return { id: entry.familyId, kind: 'family' };
  }
  if (entry.orgId) {
    return { id: entry.orgId, kind: 'org' };
  }
  throw new Error(`audit entry ${entry.action} names neither a family nor an org`);
}

export function createAuditSink(deps: { clock: Clock; enabled: boolean }): EffectSink {
  return async (trx, effects) => {
    if (!deps.enabled || effects.audit.length === 0) {
      return;
    }
    const now = deps.clock.now();
    // One append per chain and actor, in the order first stated.
    const groups = new Map<string, { chain: Chain; entries: StatedAuditEntry[] }>();
    for (const entry of effects.audit) {
      const chain = chainOf(entry);
      const key = `${chain.id} ${entry.actor.type} ${entry.actor.id}`;
      const group = groups.get(key) ?? { chain, entries: [] };
      group.entries.push(entry);
      groups.set(key, group);
    }
    for (const { chain, entries } of groups.values()) {
      await appendToChain(trx, chain, entries, randomUUID, now);
    }
  };
}
