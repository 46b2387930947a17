// Who an audit entry says acted (CONTRACT.md §12.1). The label is resolved when the entry is
// written and names the actor without a personal value (docs/decisions.md "What an audit
// entry says"): a key's, token's or device key's prefix, a person's role, a system act's name.
import type { DeviceIdentity, Principal } from '../../auth/principal.js';

export type AuditActorType = 'user' | 'api_key' | 'mcp_token' | 'device' | 'system';

export interface AuditActor {
  type: AuditActorType;
  id: string;
  /** Given for system acts and sandbox callers; resolved from the database otherwise. */
  label?: string;
  requestId: string | null;
}

/** Haven's own acts, named by what did them. */
export type SystemAct =
  | 'age run'
  | 'enforcement worker'
  | 'retention purge'
  | 'erasure'
  | 'test clock'
  /** The webhook delivery worker, which disables an endpoint failing for 5 days. */
  | 'webhook delivery'
  /** An operator command (`npm run admin`): who ran it is the deployment's to know. */
  | 'operator';

export function actorOf(principal: Principal): AuditActor {
  const requestId = principal.requestId ?? null;
  switch (principal.kind) {
    case 'user':
      return { type: 'user', id: principal.userId, requestId };
    case 'sandbox':
      return { type: 'user', id: principal.userId, label: 'sandbox session', requestId };
    case 'mcp':
      return { type: 'mcp_token', id: principal.tokenId, requestId };
    case 'key':
      return { type: 'api_key', id: principal.keyId, label: principal.keyPrefix, requestId };
  }
}

export function deviceActor(device: DeviceIdentity): AuditActor {
  return { type: 'device', id: device.id, requestId: device.requestId ?? null };
}

export function systemActor(act: SystemAct): AuditActor {
  return { type: 'system', id: 'haven', label: act, requestId: null };
}
