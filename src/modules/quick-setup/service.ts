// Quick setup (spec "Quick setup"): a family, a child, an active policy and its 20
// age-appropriate rules in one call. The dedupe key is (family_id, child_name, birth_date).
// The call is one change with one audit entry (`setup.quick`, its target the child) saying
// what it set; a call that finds everything made writes nothing and states no entry.
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import type { ChangeRunner, StatedAuditEntry, StatedEvent } from '../../db/transaction-effects.js';
import { BadRequestError, ForbiddenError } from '../../http/errors.js';
import { ageOn, nextAgeChangeOn } from '../age/bands.js';
import { rulesForAge, type Strictness } from '../age/derivation.js';
import { actorOf } from '../audit/actor.js';
import { auditChanges, REDACTED } from '../audit/changes.js';
import { newChainRows } from '../audit/store.js';
import { birthDateTime, parseBirthDate } from '../children/birth-date.js';
import type { ChildrenService } from '../children/service.js';
import type { FamiliesService } from '../families/service.js';
import type { PolicyChanges } from '../policies/policy-changes.js';
import { policyEventData } from '../policies/service.js';
import type { FamilyClock } from '../test-clocks/family-clock.js';
import type { TestClocksService } from '../test-clocks/service.js';
import { type QuickSetupRows, writeQuickSetup } from './store.js';

export interface QuickSetupInput {
  child_name: string;
  birth_date: string;
  strictness?: Strictness;
  family_id?: string;
  family_name?: string;
  /** Sandbox: the test clock a new family joins. */
  test_clock_id?: string | null;
}

export function createQuickSetupService(deps: {
  db: Db;
  clock: Clock;
  families: Pick<FamiliesService, 'requireFamily'>;
  children: Pick<ChildrenService, 'eventData'>;
  writes: ChangeRunner;
  policyChanges: Pick<PolicyChanges, 'child'>;
  familyClock: Pick<FamilyClock, 'nowFor'>;
  testClocks: Pick<TestClocksService, 'requireClock'>;
  /** Whether changes write audit entries (wiring's `auditLog`): a new family writes its own. */
  auditLog: boolean;
}) {
  /** The events of what this call wrote (a repeated call writes nothing). */
  function eventsOf(rows: QuickSetupRows, now: Date): StatedEvent[] {
    const events: StatedEvent[] = [];
    if (rows.wrote.child) {
      events.push({ type: 'child.created', data: deps.children.eventData(rows.child, now) });
    }
    const policy = policyEventData(rows.policy);
    if (rows.wrote.policy === 'created') {
      events.push({ type: 'policy.created', data: policy });
      events.push({ type: 'policy.activated', data: policy });
    } else if (rows.wrote.policy === 'updated') {
      events.push({ type: 'policy.updated', data: policy });
    }
    return events;
  }

  /**
   * The call's audit entry, or none when it wrote nothing. Names, birth date and the family's
   * name are named without their values; what was made, the policy and how many rules it
   * wrote are settings.
   */
  function auditEntry(
    principal: Principal,
    rows: QuickSetupRows,
    input: { familyName: string; testClockId: string | undefined; strictness: Strictness },
  ): StatedAuditEntry | undefined {
    const { wrote } = rows;
    if (!wrote.family && !wrote.child && wrote.policy === 'none') {
      return undefined;
    }
    return {
      familyId: rows.family.id,
      actor: actorOf(principal),
      action: 'setup.quick',
      target: { type: 'child', id: rows.child.id },
      changes: {
        family_created: wrote.family,
        ...(wrote.family
          ? auditChanges({ family_name: input.familyName, test_clock_id: input.testClockId }, [
              'family_name',
            ])
          : {}),
        child_created: wrote.child,
        child_name: REDACTED,
        birth_date: REDACTED,
        policy_id: rows.policy.id,
        policy_status: rows.policy.status,
        policy_version: rows.policy.version,
        strictness: input.strictness,
        rules_written: wrote.rules,
      },
    };
  }

  return {
    async quickSetup(principal: Principal, input: QuickSetupInput) {
      const childName = input.child_name.trim();
      if (childName === '') {
        throw new BadRequestError('child_name is required');
      }
      // The visibility check reads the family: the write into it starts from that row.
      const existing = input.family_id
        ? await deps.families.requireFamily(principal, input.family_id, 'write')
        : undefined;
      if (!existing && principal.kind === 'mcp') {
        throw new ForbiddenError('an MCP token acts for its one family only');
      }
      // A new family may join a test clock; an existing one keeps the clock it has.
      const testClock =
        !existing && input.test_clock_id
          ? await deps.testClocks.requireClock(principal, input.test_clock_id)
          : undefined;
      const now = existing
        ? await deps.familyClock.nowFor(existing.id)
        : testClock
          ? new Date(testClock.frozen_time)
          : deps.clock.now();
      const birthDate = parseBirthDate(input.birth_date, now);
      const familyName = input.family_name?.trim() || `${childName}'s Family`;
      const strictness = input.strictness ?? 'recommended';
      const childAge = Math.max(0, ageOn(birthDate, now));
      const generated = rulesForAge(childAge, strictness);
      const audited = { familyName, testClockId: testClock?.id, strictness };

      const rows = await writeQuickSetup(
        deps.db,
        {
          family: existing
            ? { existing }
            : {
                create: {
                  id: randomUUID(),
                  name: familyName,
                  org_id: principal.kind === 'key' ? principal.orgId : null,
                  environment: principal.kind === 'key' ? principal.environment : 'test',
                  test_clock_id: testClock?.id ?? null,
                  created_at: now,
                  updated_at: now,
                },
                ownerUserId: principal.kind === 'key' ? undefined : principal.userId,
              },
          child: { name: childName, birth_date: birthDate },
          policyName: `${childName}'s Protection Policy`,
          rules: generated.rules,
          strictness,
          childAge,
          nextAgeChangeOn: nextAgeChangeOn(birthDate, now),
          now,
        },
        (trx, written) =>
          deps.writes.within(trx, async (change) => {
            change.emit(written.family.id, eventsOf(written, now));
            const entry = auditEntry(principal, written, audited);
            if (entry) {
              change.audit(entry);
            }
          }),
        // A new family's chain begins with this entry, written by the setup's one statement:
        // the caller becomes its owner (a key is named by its prefix), on the family's clock.
        (written) => {
          const entry = deps.auditLog ? auditEntry(principal, written, audited) : undefined;
          return entry
            ? newChainRows(
                { id: written.family.id, kind: 'family' },
                [entry],
                entry.actor.label ?? 'owner',
                now,
                randomUUID,
              )
            : undefined;
        },
      );
      if (rows.wrote.policy !== 'none') {
        // A new active policy may outrank the one in force; a repair raised the version.
        await deps.policyChanges.child(rows.child.id);
      }

      return {
        family: { id: rows.family.id, name: rows.family.name },
        child: {
          id: rows.child.id,
          name: rows.child.name,
          birth_date: birthDateTime(rows.child.birth_date),
        },
        policy: {
          id: rows.policy.id,
          name: rows.policy.name,
          status: rows.policy.status,
          strictness: rows.policy.strictness,
        },
        rules: rows.rules,
        age_group: generated.age_group,
        max_ratings: generated.max_ratings,
        rule_summary: generated.rule_summary,
      };
    },
  };
}

export type QuickSetupService = ReturnType<typeof createQuickSetupService>;
