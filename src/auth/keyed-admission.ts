// What every keyed fast path decides before it answers (http/fast-path.ts): the caller's key
// (in memory: one SHA-256 and a map read), its scope, its org's rate-limit bucket. Admission
// counts the request in the bucket; anything it does not fully know is left to the route
// untouched: a key not in memory (or revoked, expired, or live on a test deployment), a
// scope the key lacks, an org limit not yet known, a full bucket, X-Forwarded-For (the
// client address is then the proxy's to tell), draining, Redis buckets (see allowedNow).
import type { IncomingMessage } from 'node:http';
import type { Clock } from '../clock.js';
import type { AppEnv } from '../config.js';
import type { ApiKeysService, CachedKey } from '../modules/api-keys/service.js';
import { allowedNow, orgBucket } from '../ratelimit/plugin.js';
import type { WindowDecision } from '../ratelimit/sliding-window.js';
import type { RateLimitStore } from '../ratelimit/stores.js';
import { readCredential } from './credentials.js';
import { grants, type Scope } from './scopes.js';
import { SECRET_PREFIXES } from './secrets.js';

export interface KeyedAdmissionOptions {
  appEnv: AppEnv;
  apiKeys: Pick<ApiKeysService, 'knownKey'>;
  orgLimit(orgId: string): number | Promise<number>;
  buckets: RateLimitStore;
  clock: Clock;
  draining(): boolean;
}

/** A request let in: its key, the bucket's decision (for the headers) and when. */
export interface Admitted {
  key: CachedKey;
  decision: WindowDecision;
  now: Date;
}

export type KeyedAdmission = (
  request: IncomingMessage,
  scope: Scope | undefined,
) => Admitted | undefined;

export function keyedAdmission(options: KeyedAdmissionOptions): KeyedAdmission {
  return (request, scope) => {
    if (request.headers['x-forwarded-for'] !== undefined || options.draining()) {
      return undefined;
    }
    const credential = readCredential(request.headers);
    if (
      credential.kind !== 'apiKey' ||
      (options.appEnv !== 'production' && credential.secret.startsWith(SECRET_PREFIXES.liveKey))
    ) {
      return undefined;
    }
    const key = options.apiKeys.knownKey(credential.secret);
    if (!key || (scope && !grants(key.scopes as Scope[], scope))) {
      return undefined;
    }
    const limit = options.orgLimit(key.org_id);
    if (typeof limit !== 'number') {
      return undefined;
    }
    const now = options.clock.now();
    const decision = allowedNow(options.buckets, orgBucket(key.org_id), limit, now.getTime());
    return decision ? { key, decision, now } : undefined;
  };
}
