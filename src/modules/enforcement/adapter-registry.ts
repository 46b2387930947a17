// Which adapter enforces a platform on this deployment. A platform without one is reported
// `unsupported` with the reason, never attempted.
import type { AppEnv } from '../../config.js';
import type { LivePartners } from '../partners/live-partners.js';
import { findPlatform, type Platform } from '../platforms/catalog.js';
import type { PlatformAdapter } from './adapter.js';
import { createDeviceAgentAdapter } from './device-agent-adapter.js';
import { createSandboxAdapter, type TakeArmedFailure } from './sandbox-adapter.js';

export type AdapterResolution =
  | { kind: 'adapter'; platform: Platform; adapter: PlatformAdapter }
  | { kind: 'unsupported'; reason: string };

export interface AdapterRegistry {
  resolve(platformId: string): AdapterResolution;
}

export function createAdapterRegistry(deps: {
  appEnv: AppEnv;
  takeArmedFailure: TakeArmedFailure;
  livePartners: LivePartners;
}): AdapterRegistry {
  const sandbox = createSandboxAdapter(deps.takeArmedFailure);
  const deviceAgent = createDeviceAgentAdapter();

  function adapterFor(platform: Platform): PlatformAdapter | undefined {
    if (deps.appEnv === 'sandbox') {
      return sandbox;
    }
    if (platform.category === 'device') {
      return deviceAgent;
    }
    return deps.livePartners.get(platform.platform_id);
  }

  return {
    resolve(platformId) {
      const platform = findPlatform(platformId);
      if (!platform) {
        // Connecting any platform_id is allowed (CONTRACT.md §7.3); only the catalog's are
        // enforced.
        return {
          kind: 'unsupported',
          reason: `${platformId} is not in the platform catalog; no adapter can enforce it`,
        };
      }
      const adapter = adapterFor(platform);
      return adapter
        ? { kind: 'adapter', platform, adapter }
        : { kind: 'unsupported', reason: `no live adapter for ${platformId} in this deployment` };
    },
  };
}
