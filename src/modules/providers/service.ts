// Provider connect configuration (spec: "Provider connect config"; CONTRACT.md §6, §9): how
// an integrator sends a parent through a provider's OAuth-style consent to link children.
import { type AppEnv, DID_PATTERN } from '../../config.js';
import type { Db } from '../../db/connect.js';
import { NotFoundError } from '../../http/errors.js';
import { type ConnectConfig, findProvider, publishConnectConfig, seedProvider } from './store.js';

export const SANDBOX_PROVIDER_DID = 'did:ocss:sandbox-provider';
export const UNCONFIGURED_PROVIDER_DID = 'did:ocss:sandbox-unconfigured-provider';
/** What a connect config asks the parent to grant (the issued token says `profiles`). */
export const SANDBOX_PROVIDER_SCOPES = ['child_profiles.read'];

const SEEDED_AT = new Date('2026-01-01T00:00:00.000Z');

export function createProvidersService(deps: { db: Db; appEnv: AppEnv; publicBaseUrl: string }) {
  const sandbox = deps.appEnv === 'sandbox';

  /** The reference provider is this deployment itself, so its URLs follow PUBLIC_BASE_URL. */
  const sandboxConfig: ConnectConfig = {
    name: 'Haven Sandbox Provider',
    authorize_url: `${deps.publicBaseUrl}/oauth/authorize`,
    token_url: `${deps.publicBaseUrl}/oauth/token`,
    profiles_url: `${deps.publicBaseUrl}/oauth/profiles`,
    scopes: SANDBOX_PROVIDER_SCOPES,
  };

  return {
    /** Idempotent, at every start. */
    async seed(): Promise<void> {
      if (sandbox) {
        await seedProvider(
          deps.db,
          { did: SANDBOX_PROVIDER_DID, name: sandboxConfig.name },
          SEEDED_AT,
        );
      }
      await seedProvider(
        deps.db,
        { did: UNCONFIGURED_PROVIDER_DID, name: 'Sandbox Unconfigured Provider' },
        SEEDED_AT,
      );
    },

    async connectConfig(did: string): Promise<ConnectConfig & { did: string }> {
      // Not a DID at all: no provider can have it (and the database is not asked).
      const provider = DID_PATTERN.test(did) ? await findProvider(deps.db, did) : undefined;
      if (!provider || (!sandbox && did === SANDBOX_PROVIDER_DID)) {
        throw new NotFoundError('provider not found');
      }
      if (provider.connect_config) {
        return { did, ...provider.connect_config };
      }
      if (sandbox && did === SANDBOX_PROVIDER_DID) {
        return { did, ...sandboxConfig };
      }
      throw new NotFoundError('provider connect config not available');
    },

    /** PATCH /platforms/{did}/connect, after the signature and standing checks. */
    async publish(did: string, config: ConnectConfig, at: Date) {
      const row = await publishConnectConfig(deps.db, { did, name: config.name }, config, at);
      return { did, ...config, updated_at: row.updated_at };
    },
  };
}

export type ProvidersService = ReturnType<typeof createProvidersService>;
