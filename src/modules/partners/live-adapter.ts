// A live partner adapter, the same for every partner: unseal the credentials, read the
// profile once, converge it to the policy (converge.ts), and turn the partner's refusals into
// results a parent can act on. The partner module supplies the API client and the mapping.
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import type { Telemetry } from '../../telemetry/telemetry.js';
import type { AdapterInput, PlatformAdapter, PlatformResult } from '../enforcement/adapter.js';
import {
  converge,
  failedWhole,
  type PartnerMapping,
  type ProfileSnapshot,
  type ProfileWriter,
} from './converge.js';
import {
  loadManagedState,
  type ManagedState,
  releaseLease,
  saveManagedState,
  takeLease,
} from './managed-state-store.js';
import { PartnerError, type PartnerHttpTuning } from './partner-http.js';

export type PartnerCredentials = Record<string, string>;

/** The process taking a lease, and when its silence means it died (jobs/liveness.ts). */
export interface LeaseHolder {
  id: string;
  staleSeconds: number;
}

/** Longer than any bounded run (each call ≤ 10 s, retried a bounded number of times). */
const LEASE_MS = 10 * 60_000;
/**
 * How long a run waits for another run of the same profile. A run whose process died frees
 * its lease once the process's heartbeat is stale (jobs/liveness.ts), well within this.
 */
const LEASE_WAIT_MS = 60_000;
const LEASE_POLL_MS = 200;

export interface PartnerClient {
  /** One read of the whole profile (also how credentials are checked at connect). */
  snapshot(): Promise<ProfileSnapshot>;
  writer: ProfileWriter;
}

export interface PartnerDefinition {
  platformId: string;
  /** As the partner calls itself, in messages. */
  name: string;
  /** Every field the credentials must have (CONTRACT.md §10.4); the last names the profile. */
  credentialFields: readonly string[];
  mapping: PartnerMapping;
  client(
    credentials: PartnerCredentials,
    baseUrl: string,
    tuning: PartnerHttpTuning,
    /** Where each call is counted and traced (partner-http.ts). */
    telemetry?: Telemetry,
  ): PartnerClient;
}

export interface LivePartner extends PlatformAdapter {
  definition: PartnerDefinition;
  /** One run, the lease held: read the profile and converge it. */
  converged(
    input: AdapterInput,
    credentials: PartnerCredentials,
    profileId: string,
  ): Promise<PlatformResult>;
  /** Checks the credentials with one read of the profile; throws PartnerError if refused. */
  check(credentials: PartnerCredentials): Promise<void>;
  /**
   * A release from a record the caller holds (an erasure: the connection's own record is
   * gone): the profile converged to nothing from `state`, which stays the caller's. With
   * `connectionId`, the run holds that connection's lease (it still exists: a child's erasure
   * leaves the family's connections), as any run of the profile does.
   */
  released(
    credentials: PartnerCredentials,
    state: ManagedState,
    lease?: { connectionId: string },
  ): Promise<PlatformResult>;
}

/** The first credential field missing or empty, if any. */
export function missingCredential(
  definition: PartnerDefinition,
  credentials: Record<string, unknown> | undefined,
): string | undefined {
  return definition.credentialFields.find((field) => {
    const value = credentials?.[field];
    return typeof value !== 'string' || value.trim() === '';
  });
}

function profileIdOf(definition: PartnerDefinition, credentials: PartnerCredentials): string {
  return credentials[definition.credentialFields.at(-1) as string] as string;
}

/** A refusal as the parent reads it in the job's results (and the connect route's 400). */
export function refusalMessage(
  definition: PartnerDefinition,
  error: PartnerError,
  profileId: string,
  connectionId?: string,
): string {
  const renew = connectionId
    ? `renew them with PATCH /api/v1/connections/${connectionId}`
    : 'check the key and the profile id';
  switch (error.kind) {
    case 'credentials':
      return `${definition.name} refused the credentials (HTTP ${error.status}): ${renew}. ${error.message}`;
    case 'not_found':
      return `${definition.name} has no profile "${profileId}" for these credentials. ${error.message}`;
    default:
      return error.message;
  }
}

export function createLivePartner(
  definition: PartnerDefinition,
  deps: {
    db: Db;
    clock: Clock;
    baseUrl: string;
    tuning: PartnerHttpTuning;
    instance: LeaseHolder;
    telemetry?: Telemetry;
  },
): LivePartner {
  const clientFor = (credentials: PartnerCredentials) =>
    definition.client(credentials, deps.baseUrl, deps.tuning, deps.telemetry);
  const busyMessage = `another enforcement of this ${definition.name} profile is still running; this one gave up waiting after ${LEASE_WAIT_MS / 1000} s`;

  /**
   * Runs `work` holding the connection's lease: one run per profile at a time, since two runs
   * reading the same profile would each send what the other is sending. `busy` answers when
   * another run kept it past the wait.
   */
  async function holdingLease(
    row: { connectionId: string; platformId: string; profileId: string },
    work: () => Promise<PlatformResult>,
    busy: () => PlatformResult,
  ): Promise<PlatformResult> {
    const owner = crypto.randomUUID();
    const waitUntil = Date.now() + LEASE_WAIT_MS;
    for (;;) {
      const now = deps.clock.now();
      const lease = {
        owner,
        now,
        until: new Date(now.getTime() + LEASE_MS),
        instance: deps.instance.id,
        staleSeconds: deps.instance.staleSeconds,
      };
      if (await takeLease(deps.db, row, lease)) {
        break;
      }
      if (Date.now() > waitUntil) {
        return busy();
      }
      await new Promise((resolve) => setTimeout(resolve, LEASE_POLL_MS));
    }
    try {
      return await work();
    } finally {
      await releaseLease(deps.db, row.connectionId, owner);
    }
  }

  const partner: LivePartner = {
    definition,

    async check(credentials) {
      await clientFor(credentials).snapshot();
    },

    async apply(input: AdapterInput): Promise<PlatformResult> {
      const credentials = (await input.credentials()) as PartnerCredentials | undefined;
      const missing = missingCredential(definition, credentials);
      if (missing !== undefined || !credentials) {
        return failedWhole(
          input.rules,
          definition.mapping,
          `the ${definition.platformId} connection has no ${missing ?? 'credentials'}: renew its credentials with PATCH /api/v1/connections/${input.connectionId}`,
        );
      }
      const profileId = profileIdOf(definition, credentials);
      const row = {
        connectionId: input.connectionId,
        platformId: definition.platformId,
        profileId,
      };
      return holdingLease(
        row,
        // The policy in force now, not when the job started (it may have waited for the lease).
        async () =>
          partner.converged({ ...input, rules: await input.latestRules() }, credentials, profileId),
        () => failedWhole(input.rules, definition.mapping, busyMessage),
      );
    },

    async released(credentials, state, lease) {
      const profileId = profileIdOf(definition, credentials);
      const release = async () => {
        const client = clientFor(credentials);
        let snapshot: ProfileSnapshot;
        try {
          snapshot = await client.snapshot();
        } catch (error) {
          if (!(error instanceof PartnerError)) {
            throw error;
          }
          return failedWhole([], definition.mapping, refusalMessage(definition, error, profileId));
        }
        return converge({
          rules: [],
          mapping: definition.mapping,
          snapshot,
          writer: client.writer,
          state,
          // Nothing is written back: the record was the erased connection's, and dies with
          // the release job.
          save: async () => {},
        });
      };
      if (!lease) {
        return release();
      }
      return holdingLease(
        { connectionId: lease.connectionId, platformId: definition.platformId, profileId },
        release,
        () => failedWhole([], definition.mapping, busyMessage),
      );
    },

    async converged(
      input: AdapterInput,
      credentials: PartnerCredentials,
      profileId: string,
    ): Promise<PlatformResult> {
      const client = clientFor(credentials);
      let snapshot: ProfileSnapshot;
      try {
        snapshot = await client.snapshot();
      } catch (error) {
        if (!(error instanceof PartnerError)) {
          throw error;
        }
        return {
          ...failedWhole(
            input.rules,
            definition.mapping,
            refusalMessage(definition, error, profileId, input.connectionId),
          ),
          ...(error.kind === 'credentials' ? { credentials_refused: true as const } : {}),
        };
      }
      const result = await converge({
        rules: input.rules,
        mapping: definition.mapping,
        snapshot,
        writer: client.writer,
        state: await loadManagedState(deps.db, input.connectionId, profileId),
        save: (state) =>
          saveManagedState(
            deps.db,
            {
              connectionId: input.connectionId,
              platformId: definition.platformId,
              profileId,
              state,
            },
            deps.clock.now(),
          ),
      });
      if (result.credentials_refused && result.error_message) {
        return {
          ...result,
          error_message: `${definition.name} refused the credentials: renew them with PATCH /api/v1/connections/${input.connectionId}. ${result.error_message}`,
        };
      }
      return result;
    },
  };
  return partner;
}
