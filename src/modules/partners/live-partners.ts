// The partners Haven enforces on through their own APIs in production (CONTRACT.md §10.4).
// A catalog platform is `compliant` only while it is listed here (platforms.test.ts).
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import type { Telemetry } from '../../telemetry/telemetry.js';
import { CONTROLD } from './controld/client.js';
import {
  createLivePartner,
  type LeaseHolder,
  type LivePartner,
  type PartnerDefinition,
} from './live-adapter.js';
import { NEXTDNS } from './nextdns/client.js';
import type { PartnerHttpTuning } from './partner-http.js';

export const LIVE_PARTNERS: readonly PartnerDefinition[] = [NEXTDNS, CONTROLD];

export function findLivePartner(platformId: string): PartnerDefinition | undefined {
  return LIVE_PARTNERS.find((partner) => partner.platformId === platformId);
}

export interface PartnerApiUrls {
  nextdns: string;
  controld: string;
}

export type LivePartners = ReadonlyMap<string, LivePartner>;

export function createLivePartners(deps: {
  db: Db;
  clock: Clock;
  urls: PartnerApiUrls;
  tuning?: PartnerHttpTuning;
  /** This process, as its heartbeat names it (a profile's lease records who holds it). */
  instance: LeaseHolder;
  /** Where partner calls are counted and traced. */
  telemetry?: Telemetry;
}): LivePartners {
  const urls: Record<string, string> = { ...deps.urls };
  return new Map(
    LIVE_PARTNERS.map((definition) => [
      definition.platformId,
      createLivePartner(definition, {
        db: deps.db,
        clock: deps.clock,
        baseUrl: urls[definition.platformId] as string,
        tuning: deps.tuning ?? {},
        instance: deps.instance,
        telemetry: deps.telemetry,
      }),
    ]),
  );
}
