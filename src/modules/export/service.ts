// Export (CONTRACT.md §12.2): everything Haven holds about a family, or about one child, as
// one JSON document written while it is read. The caller is checked before the document
// starts (a refusal is an ordinary 403/404); the rest is read a page at a time by the stream.
import type { Principal } from '../../auth/principal.js';
import type { Db } from '../../db/connect.js';
import { presentAgeSignal } from '../age/signals-service.js';
import { chainEntries, entryOf } from '../audit/store.js';
import type { ChildrenService } from '../children/service.js';
import type { ChildRow } from '../children/store.js';
import { deviceJson } from '../devices/service.js';
import { jobResource } from '../enforcement/job-resource.js';
import type { FamiliesService } from '../families/service.js';
import type { FamilyRow } from '../families/store.js';
import { policyEventData } from '../policies/service.js';
import type { FamilyClock } from '../test-clocks/family-clock.js';
import { ratingOf } from '../viewing-history/service.js';
import { array, type Chunks, extended, object, value } from './json-writer.js';
import {
  childAgeSignals,
  childAuditEntries,
  childDevices,
  childPolicies,
  childViewingHistory,
  deviceReports,
  enforcementJobs,
  familyChildren,
  familyConnections,
  familyMcpTokens,
  familyMembers,
  familyWebhooks,
  policyRules,
  webhookDeliveries,
} from './store.js';

/** The Family as GET /families/{familyID} shows it. */
function presentFamily(family: FamilyRow) {
  return {
    id: family.id,
    name: family.name,
    test_clock_id: family.test_clock_id,
    created_at: family.created_at,
    updated_at: family.updated_at,
  };
}

/** Every row `rowsOf` reads for each item of `items`, in turn. */
async function* each<T, R>(
  items: AsyncIterable<T> | Iterable<T>,
  rowsOf: (item: T) => AsyncIterable<R>,
) {
  for await (const item of items) {
    yield* rowsOf(item);
  }
}

export function createExportService(deps: {
  db: Db;
  families: Pick<FamiliesService, 'requireFamily'>;
  children: Pick<ChildrenService, 'requireChildAt' | 'present'>;
  familyClock: Pick<FamilyClock, 'nowFor'>;
}) {
  const { db } = deps;

  /** The children of the document: the family's, read again for each part that needs them. */
  type Children = () => AsyncIterable<ChildRow> | Iterable<ChildRow>;

  /** The parts about children (both documents hold them), in the contract's order. */
  function childParts(children: Children, now: Date) {
    const ids = () =>
      each(children(), async function* (child) {
        yield child.id;
      });
    return {
      children: array(children(), (child) =>
        extended(
          deps.children.present(child, now),
          'age_signals',
          array(childAgeSignals(db, child.id), (signal) => value(presentAgeSignal(signal))),
        ),
      ),
      policies: array(
        each(ids(), (childId) => childPolicies(db, childId)),
        (policy) => extended(policyEventData(policy), 'rules', array(policyRules(db, policy.id))),
      ),
      devices: array(
        each(ids(), (childId) => childDevices(db, childId)),
        (device) => value(deviceJson(device)),
      ),
      device_reports: array(
        each(ids(), (childId) =>
          each(childDevices(db, childId), (device) => deviceReports(db, device.id)),
        ),
      ),
      viewing_history: array(
        each(ids(), (childId) => childViewingHistory(db, childId)),
        (entry) => value({ ...entry, rating: ratingOf(entry) }),
      ),
    };
  }

  return {
    /** Owners and parents (and the org's keys): the family's whole record. */
    async familyExport(principal: Principal, familyId: string): Promise<Chunks> {
      const family = await deps.families.requireFamily(principal, familyId, 'write');
      const now = await deps.familyClock.nowFor(familyId);
      const parts = childParts(() => familyChildren(db, familyId), now);
      return object([
        ['exported_at', value(now)],
        ['family', value(presentFamily(family))],
        ['members', array(familyMembers(db, familyId))],
        ['children', parts.children],
        ['policies', parts.policies],
        [
          'connections',
          array(familyConnections(db, familyId), (connection) =>
            value({ ...connection, profiles: connection.profiles ?? [] }),
          ),
        ],
        ['devices', parts.devices],
        ['device_reports', parts.device_reports],
        [
          'enforcement_jobs',
          array(enforcementJobs(db, { familyId }), (job) => value(jobResource(job))),
        ],
        ['viewing_history', parts.viewing_history],
        ['webhooks', array(familyWebhooks(db, familyId))],
        [
          'deliveries',
          array(
            each(familyWebhooks(db, familyId), (webhook) => webhookDeliveries(db, webhook.id)),
            ({ seq: _seq, ...delivery }) => value(delivery),
          ),
        ],
        ['mcp_tokens', array(familyMcpTokens(db, familyId))],
        ['audit_log', array(chainEntries(db, familyId))],
      ]);
    },

    /** The same for one child (owners and parents of its family, the org's keys). */
    async childExport(principal: Principal, childId: string): Promise<Chunks> {
      const { child, now } = await deps.children.requireChildAt(principal, childId, 'write');
      const family = await deps.families.requireFamily(principal, child.family_id, 'write');
      const parts = childParts(() => [child], now);
      return object([
        ['exported_at', value(now)],
        ['family', value(presentFamily(family))],
        ['children', parts.children],
        ['policies', parts.policies],
        ['devices', parts.devices],
        ['device_reports', parts.device_reports],
        [
          'enforcement_jobs',
          array(enforcementJobs(db, { childId }), (job) => value(jobResource(job))),
        ],
        ['viewing_history', parts.viewing_history],
        [
          'audit_log',
          array(childAuditEntries(db, child.family_id, childId), (row) => value(entryOf(row))),
        ],
      ]);
    },
  };
}

export type ExportService = ReturnType<typeof createExportService>;
