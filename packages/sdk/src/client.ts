// `new Haven({...})`: the client (CONTRACT.md §10.2). The credential chooses the routes: an
// API key calls the /api/v1/developer twins, anything else /api/v1.
import { verifyAuditChain } from './audit-chain.js';
import { Core, type Credential } from './core.js';
import {
  type ErasureReceipt,
  type VerifyErasureReceiptOptions,
  verifyErasureReceipt,
} from './erasure-receipt.js';
import { createResources, type Resources } from './generated/resources.js';
import type { Signer } from './signer.js';

export interface HavenOptions {
  /** Where Haven is (default http://127.0.0.1:8080, what `npm start` serves). */
  baseUrl?: string;
  /** `svc_test_…` / `svc_live_…`: the /developer routes, scoped by the key. */
  apiKey?: string;
  /** A session token (the identity provider's JWT, or the sandbox's `npm run token`). */
  sessionToken?: string;
  /** `svcmcp_…`: acts as its user, on its family only. */
  mcpToken?: string;
  /** Sandbox only, no credential: this name keys your data (`X-Sandbox-Session`). */
  sandboxSession?: string;
  /** `svcdev_…`: the device agent routes. */
  deviceKey?: string;
  /** Signs the OCSS verbs (csm.bulkReviews, platforms.connect) per RFC 9421. */
  signer?: Signer;
  /** Retries of a call that may pass (network errors, 429, 502-504). Default 2. */
  maxRetries?: number;
  /** Bound on each attempt, in milliseconds. Default 30 000. */
  timeoutMs?: number;
  /** A fetch to use instead of the global one (tests, proxies, instrumentation). */
  fetch?: typeof fetch;
}

function credentialOf(options: HavenOptions): Credential {
  const given = (
    [
      ['apiKey', options.apiKey],
      ['sessionToken', options.sessionToken],
      ['mcpToken', options.mcpToken],
      ['sandboxSession', options.sandboxSession],
      ['deviceKey', options.deviceKey],
    ] as const
  ).filter(([, value]) => value !== undefined);
  if (given.length > 1) {
    throw new TypeError(`give one credential, not ${given.map(([name]) => name).join(' and ')}`);
  }
  const [name, value] = given[0] ?? [];
  switch (name) {
    case 'apiKey':
      return { kind: 'apiKey', value: value as string };
    case 'sessionToken':
    case 'mcpToken':
      return { kind: 'bearer', value: value as string };
    case 'sandboxSession':
      return { kind: 'sandboxSession', value: value as string };
    case 'deviceKey':
      return { kind: 'deviceKey', value: value as string };
    default:
      return { kind: 'none' };
  }
}

/** What no operation does: methods written by hand beside the generated ones. */
function handWritten() {
  return {
    auditLog: {
      /** Recomputes an audit chain where you are (see `verifyAuditChain`). */
      verify: verifyAuditChain,
    },
    erasures: {
      /** Checks a completed receipt's signature and content (see `verifyErasureReceipt`). */
      verify: (receipt: ErasureReceipt, options: VerifyErasureReceiptOptions) =>
        verifyErasureReceipt(receipt, options?.stewardKey),
    },
  };
}

type HandWritten = ReturnType<typeof handWritten>;

/** The generated resources, each with its hand-written methods beside. */
type AllResources = Omit<Resources, keyof HandWritten> & {
  [name in keyof HandWritten]: Resources[name] & HandWritten[name];
};

// The resources are generated from the OpenAPI document; the class carries them.
export interface Haven extends AllResources {}

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the generated resources are merged in
export class Haven {
  constructor(options: HavenOptions = {}) {
    const core = new Core({
      baseUrl: (options.baseUrl ?? 'http://127.0.0.1:8080').replace(/\/+$/, ''),
      credential: credentialOf(options),
      signer: options.signer,
      maxRetries: options.maxRetries ?? 2,
      timeoutMs: options.timeoutMs ?? 30_000,
      fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    });
    const resources: Record<string, object> = createResources(core);
    for (const [name, methods] of Object.entries(handWritten())) {
      resources[name] = { ...resources[name], ...methods };
    }
    Object.assign(this, resources);
  }
}
