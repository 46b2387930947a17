// Which requests a cross-cutting rule applies to, decided by path in one place.

const MUTATING_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function isApiPath(path: string): boolean {
  return path === '/api/v1' || path.startsWith('/api/v1/');
}

export function isMutatingMethod(method: string): boolean {
  return MUTATING_METHODS.has(method.toUpperCase());
}

/** The MCP endpoint (CONTRACT.md §10.1). */
export const MCP_PATH = '/mcp';

/**
 * CONTRACT.md §4: everything under /api/v1 except the Annex B editions is metered; so is
 * /mcp, in the token user's bucket (§10.1).
 */
export function isMeteredPath(path: string): boolean {
  return (isApiPath(path) && !path.startsWith('/api/v1/annex-b/')) || path === MCP_PATH;
}
