// Spec: "ChildProfile (sandbox reference OAuth leg)". The sandbox provider's accounts and the
// child profiles each one shares. The demo account shares the seeded demo family, so a
// profile's `subject_ref` is a child id every other leg (policies, enforcement) knows.
import { DEMO_CHILDREN } from '../demo/demo-family.js';

export interface ChildProfile {
  /** The provider's own id for the profile: stable, never empty. */
  id: string;
  /** The child's name as the provider shows it. */
  displayName: string;
  /** The Haven child id (uuid) the policy and enforcement legs key on. */
  subject_ref: string;
  kind: 'child';
}

/** `demo`: the demo family's three children. `no-children`: an account with none. */
export const SANDBOX_ACCOUNTS = ['demo', 'no-children'] as const;
export type SandboxAccount = (typeof SANDBOX_ACCOUNTS)[number];

export const DEFAULT_SANDBOX_ACCOUNT: SandboxAccount = 'demo';

export function isSandboxAccount(value: unknown): value is SandboxAccount {
  return SANDBOX_ACCOUNTS.includes(value as SandboxAccount);
}

/**
 * The provider-side id is derived from the child id (stable across restarts and resets) but
 * is not the same string, as a real provider's account ids would not be Haven's.
 */
const DEMO_PROFILES: readonly ChildProfile[] = DEMO_CHILDREN.map((child) => ({
  id: `sbxchild_${child.id}`,
  displayName: child.name,
  subject_ref: child.id,
  kind: 'child' as const,
}));

/** A fresh array each call, so a caller's changes never reach the next caller. */
export function profilesFor(account: SandboxAccount): ChildProfile[] {
  switch (account) {
    case 'demo':
      return DEMO_PROFILES.map((profile) => ({ ...profile }));
    case 'no-children':
      return [];
  }
}
