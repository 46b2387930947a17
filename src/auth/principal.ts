// Who a request acts for, and what each route accepts. Routes declare `config.auth` (and
// `config.scope` for API keys); the auth plugin resolves `request.principal` from it.
import type { FastifyRequest } from 'fastify';
import type { Scope } from './scopes.js';

export type Environment = 'test' | 'live';

export type Principal = (
  | { kind: 'user'; userId: string }
  | { kind: 'mcp'; userId: string; familyId: string; tokenId: string }
  | {
      kind: 'key';
      keyId: string;
      orgId: string;
      environment: Environment;
      scopes: Scope[];
      /** The key's display prefix: how the audit log names it, known without a lookup. */
      keyPrefix: string;
    }
  /** Sandbox caller without a credential: the stable sandbox user of its X-Sandbox-Session. */
  | { kind: 'sandbox'; session: string; userId: string }
) & {
  /** The request acting (its `x-request-id`), for the audit log; absent outside a request. */
  requestId?: string;
};

/** A caller authenticated by an API key. */
export type KeyPrincipal = Extract<Principal, { kind: 'key' }>;

/**
 * - `public`: no credential is read.
 * - `session`: management routes; only a session bearer (CONTRACT.md §2).
 * - `product`: a session, an MCP token or an API key; on a sandbox deployment no credential
 *   at all acts as the anonymous sandbox caller.
 * - `developer`: `/api/v1/developer/**`; only an API key.
 * - `device`: `/api/v1/device/**`; only an `X-Device-Key` (CONTRACT.md §8). The device is
 *   put on `request.device`; `request.principal` stays null, so no product route can ever
 *   be reached with a device key.
 */
/** `mcp`: MCP tokens only (POST /mcp, CONTRACT.md §10.1). */
export type AuthMode = 'public' | 'session' | 'product' | 'developer' | 'device' | 'mcp';

/** The device behind a verified `X-Device-Key`. */
export interface DeviceIdentity {
  id: string;
  childId: string;
  familyId: string;
  /** The request acting (its `x-request-id`), for the audit log. */
  requestId?: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode;
    /** Required of API keys on product and developer routes. */
    scope?: Scope;
  }
  interface FastifyRequest {
    principal: Principal | null;
    /** Set only on `device` routes. */
    device: DeviceIdentity | null;
  }
}

/** Identifies the caller for per-caller state (idempotency receipts, later rate buckets). */
export function callerKeyOf(principal: Principal): string {
  switch (principal.kind) {
    case 'user':
      return `user:${principal.userId}`;
    case 'mcp':
      return `mcp:${principal.tokenId}`;
    case 'key':
      return `org:${principal.orgId}:${principal.environment}`;
    case 'sandbox':
      return `sandbox:${principal.session}`;
  }
}

/** The user of a session-only route; the auth plugin guarantees one is there. */
export function sessionUserId(request: FastifyRequest): string {
  const principal = request.principal;
  if (principal?.kind !== 'user') {
    throw new Error('route declared auth: session but no session principal was resolved');
  }
  return principal.userId;
}

/** A session caller: its user, and its request for the audit log. */
export type SessionPrincipal = Extract<Principal, { kind: 'user' }>;

/** The caller of a session-only route, whose changes name it in the audit log. */
export function sessionPrincipal(request: FastifyRequest): SessionPrincipal {
  const principal = request.principal;
  if (principal?.kind !== 'user') {
    throw new Error('route declared auth: session but no session principal was resolved');
  }
  return principal;
}

/** The principal of a route that declared an auth mode other than `public`. */
export function requirePrincipal(request: FastifyRequest): Principal {
  if (!request.principal) {
    throw new Error('route needs a principal but none was resolved');
  }
  return request.principal;
}

/** The device of a route that declared `auth: 'device'`. */
export function requireDevice(request: FastifyRequest): DeviceIdentity {
  if (!request.device) {
    throw new Error('route needs a device but none was resolved');
  }
  return request.device;
}
