// The 14 API-key scopes (CONTRACT.md §3). An empty list on a key means every scope.
export const SCOPES = [
  'read:families',
  'write:families',
  'read:children',
  'write:children',
  'read:policies',
  'write:policies',
  'read:enforcement',
  'write:enforcement',
  'read:devices',
  'write:devices',
  'read:webhooks',
  'write:webhooks',
  'read:ratings',
  'read:platforms',
] as const;

export type Scope = (typeof SCOPES)[number];

const KNOWN = new Set<string>(SCOPES);

export function isScope(name: string): name is Scope {
  return KNOWN.has(name);
}

export function grants(keyScopes: readonly Scope[], required: Scope): boolean {
  return keyScopes.length === 0 || keyScopes.includes(required);
}
