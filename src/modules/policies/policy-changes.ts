// Which policy is in force for a child, and its version, is kept in memory by every instance
// (the device poll answers "unchanged" from it). Every write that can change either announces
// it here after its transaction commits; the invalidation bus carries it to every instance.
// Announcing too much costs a reload; announcing too little serves a stale version until the
// entry's TTL, so writers announce whatever they touched.
import type { InvalidationBus } from '../../cache/invalidation-bus.js';

const CHANNEL = 'policy-in-force';
const EVERYTHING = '*';

/** What changed: one child's policies, every child of a family, or anything at all. */
export type PolicyChange =
  | { kind: 'child'; id: string }
  | { kind: 'family'; id: string }
  | { kind: 'everything' };

export interface PolicyChanges {
  /** A policy of this child was created, changed, (de)activated or deleted, or the child. */
  child(childId: string): Promise<void>;
  /** The family went with its children (deletion). */
  family(familyId: string): Promise<void>;
  /** Families went whose ids the writer does not hold (sandbox sessions swept). */
  everything(): Promise<void>;
  /** Hears every change, local or from another instance. */
  subscribe(handler: (change: PolicyChange) => void): void;
}

function parse(message: string): PolicyChange {
  if (message === EVERYTHING) {
    return { kind: 'everything' };
  }
  const [kind, id] = message.split(':', 2);
  if ((kind === 'child' || kind === 'family') && id) {
    return { kind, id };
  }
  // An unreadable message (another version's?) must not leave anything stale.
  return { kind: 'everything' };
}

export function createPolicyChanges(bus: InvalidationBus): PolicyChanges {
  return {
    child: (childId) => bus.publish(CHANNEL, `child:${childId}`),
    family: (familyId) => bus.publish(CHANNEL, `family:${familyId}`),
    everything: () => bus.publish(CHANNEL, EVERYTHING),
    subscribe: (handler) => bus.subscribe(CHANNEL, (message) => handler(parse(message))),
  };
}
