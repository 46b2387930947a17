// One HTTP POST of a signed webhook body. node:http rather than fetch: its `lookup` hook lets
// the address check run on the very addresses the socket connects to (no second resolution
// a rebinding DNS server could answer differently), and it never follows redirects.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import {
  AddressRefusedError,
  assertPublic,
  assertPublicUrl,
  bareHost,
  type HostResolver,
  type ResolvedAddress,
} from './address-guard.js';

export interface TargetRules {
  /** Production: https only, public addresses only (CONTRACT.md §8). */
  publicOnly: boolean;
  resolve: HostResolver;
  timeoutMs: number;
}

export type PostOutcome = { kind: 'answered'; status: number } | { kind: 'failed'; error: string };

const USER_AGENT = 'Haven-Webhooks/1';

/** Resolves through the injected resolver, checks every answer, and hands those to connect. */
function checkedLookup(rules: TargetRules): LookupFunction {
  return (hostname, options, callback) => {
    rules
      .resolve(hostname)
      .then((found) => {
        if (rules.publicOnly) {
          assertPublic(hostname, found);
        }
        const family = options.family === 4 || options.family === 6 ? options.family : undefined;
        const usable = found.filter((a) => family === undefined || a.family === family);
        const [first] = usable;
        if (!first) {
          throw Object.assign(new Error(`${hostname} does not resolve`), { code: 'ENOTFOUND' });
        }
        if (options.all) {
          (callback as (e: null, all: ResolvedAddress[]) => void)(null, usable);
        } else {
          callback(null, first.address, first.family);
        }
      })
      .catch((error: NodeJS.ErrnoException) => callback(error, '', 0));
  };
}

function describe(error: Error, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) {
    return `no response within ${timeoutMs / 1000} s`;
  }
  if (error instanceof AddressRefusedError) {
    return `refused: ${error.message}`;
  }
  return error.message || String(error);
}

export async function postSigned(
  url: string,
  body: string,
  headers: Record<string, string>,
  rules: TargetRules,
): Promise<PostOutcome> {
  const target = new URL(url);
  // A literal address is connected to without a lookup, so checkedLookup never sees it.
  if (rules.publicOnly && (target.protocol !== 'https:' || isIP(bareHost(target)))) {
    try {
      await assertPublicUrl(target, rules.resolve);
    } catch (error) {
      return { kind: 'failed', error: describe(error as Error, false, 0) };
    }
  }
  const signal = AbortSignal.timeout(rules.timeoutMs);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const request = send(
      target,
      {
        method: 'POST',
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': USER_AGENT,
        },
        lookup: checkedLookup(rules),
        signal,
        // A fresh connection per attempt: nothing pooled outlives the address check.
        agent: false,
      },
      (response) => {
        resolve({ kind: 'answered', status: response.statusCode ?? 0 });
        // Only the status matters; the body is not read.
        response.destroy();
      },
    );
    request.on('error', (error) =>
      resolve({ kind: 'failed', error: describe(error, signal.aborted, rules.timeoutMs) }),
    );
    request.end(body);
  });
}
