// Children: created and changed by a family's owners and parents, read by every member.
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import type { ChangeRunner } from '../../db/transaction-effects.js';
import { BadRequestError } from '../../http/errors.js';
import { ageOn, nextAgeChangeOn } from '../age/bands.js';
import { childAgeOn } from '../age/effective-age.js';
import { actorOf } from '../audit/actor.js';
import { auditChanges } from '../audit/changes.js';
import { type FamiliesService, tenantOf } from '../families/service.js';
import { type FamilyFacts, withoutFacts } from '../families/store.js';
import type { FamilyClock } from '../test-clocks/family-clock.js';
import { birthDateTime, parseBirthDate } from './birth-date.js';
import {
  type ChildRow,
  findChildRead,
  insertChild,
  listChildrenRead,
  updateChild,
} from './store.js';

export const CHILD_NOT_FOUND = 'child not found';
/** A child's personal data: the audit log names these fields without their values. */
const CHILD_PERSONAL_FIELDS = ['name', 'birth_date', 'avatar_url'] as const;

/** The fields a body set, and nothing else it carried (unknown fields are not changes). */
function childFields(input: Partial<Record<(typeof CHILD_PERSONAL_FIELDS)[number], unknown>>) {
  return { name: input.name, birth_date: input.birth_date, avatar_url: input.avatar_url };
}

export interface ChildInput {
  name?: string;
  birth_date?: string;
  avatar_url?: string | null;
}

function checkName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '') {
    throw new BadRequestError('name is required');
  }
  return trimmed;
}

function checkAvatarUrl(url: string | null | undefined): string | null {
  if (url === undefined || url === null || url === '') {
    return null;
  }
  try {
    const parsed = new URL(url);
    if (parsed.protocol === 'https:' || parsed.protocol === 'http:') {
      return url;
    }
  } catch {
    // below
  }
  throw new BadRequestError('avatar_url must be an absolute http(s) URL');
}

export function createChildrenService(deps: {
  db: Db;
  clock: Clock;
  families: Pick<FamiliesService, 'requireFamily' | 'checkThrough' | 'presentVisibleRows'>;
  writes: ChangeRunner;
  familyClock: FamilyClock;
}) {
  const { db, familyClock } = deps;

  /**
   * The wire shape: birth date as midnight UTC, with the age and band it gives today. Built
   * field by field rather than spread: rows read with their family's facts arrive as
   * copies of varying shape, and this runs for every child of every read.
   */
  function present(child: ChildRow, now: Date) {
    const age = childAgeOn(child, now);
    return {
      id: child.id,
      family_id: child.family_id,
      name: child.name,
      birth_date: birthDateTime(child.birth_date),
      avatar_url: child.avatar_url,
      created_at: child.created_at,
      updated_at: child.updated_at,
      age: age.age,
      age_group: age.age_group,
      effective_age: age.effective_age,
      age_conflict: age.age_conflict,
      next_age_change_on: age.next_age_change_on,
    };
  }

  /** The Child as the API shows it at `now` (its family's), JSON-ready: what events carry. */
  function eventData(row: ChildRow, now: Date) {
    const child = present(row, now);
    return {
      ...child,
      created_at: child.created_at.toISOString(),
      updated_at: child.updated_at.toISOString(),
    };
  }

  /** The event of a change to the child, stated in the change (it commits with it). */
  function stated(type: 'child.created' | 'child.updated', row: ChildRow, now: Date) {
    return [{ type, data: eventData(row, now) }];
  }

  /** One statement: the child, whether the caller sees its family, and the family's now. */
  async function requireChildAt(principal: Principal, childId: string, access: 'read' | 'write') {
    const row = await findChildRead(db, childId, tenantOf(principal));
    // A child of a family the caller cannot see does not exist for it.
    deps.families.checkThrough(principal, row, CHILD_NOT_FOUND, { access });
    const visible = row as ChildRow & FamilyFacts;
    return { child: withoutFacts(visible) as ChildRow, now: familyClock.nowOf(visible) };
  }

  async function requireChild(
    principal: Principal,
    childId: string,
    access: 'read' | 'write',
  ): Promise<ChildRow> {
    return (await requireChildAt(principal, childId, access)).child;
  }

  return {
    requireChild,
    requireChildAt,
    present,
    eventData,

    async createChild(
      principal: Principal,
      familyId: string,
      input: { name: string; birth_date: string; avatar_url?: string | null },
    ) {
      await deps.families.requireFamily(principal, familyId, 'write');
      const now = await familyClock.nowFor(familyId);
      const birthDate = parseBirthDate(input.birth_date, now);
      const child: ChildRow = {
        id: randomUUID(),
        family_id: familyId,
        name: checkName(input.name),
        birth_date: birthDate,
        avatar_url: checkAvatarUrl(input.avatar_url),
        created_at: now,
        updated_at: now,
        // A child without policies has nothing to derive: its age now counts as applied.
        age_applied: Math.max(0, ageOn(birthDate, now)),
        next_age_change_on: nextAgeChangeOn(birthDate, now),
        counting_signals: [],
      };
      await deps.writes.run(async (change) => {
        await insertChild(change.trx, child);
        change.emit(familyId, stated('child.created', child, now));
        change.audit({
          familyId,
          actor: actorOf(principal),
          action: 'child.created',
          target: { type: 'child', id: child.id },
          changes: auditChanges(childFields(input), CHILD_PERSONAL_FIELDS),
        });
      });
      return present(child, now);
    },

    async listChildren(principal: Principal, familyId: string) {
      const result = await listChildrenRead(db, familyId, tenantOf(principal));
      // Every row carries the same family's facts: one clock reading for the list.
      const now = result[0] ? familyClock.nowOf(result[0]) : undefined;
      return deps.families.presentVisibleRows(principal, result, 'id', (child) =>
        present(child as ChildRow, now ?? familyClock.nowOf(child)),
      );
    },

    async getChild(principal: Principal, childId: string) {
      const { child, now } = await requireChildAt(principal, childId, 'read');
      return present(child, now);
    },

    async updateChild(principal: Principal, childId: string, input: ChildInput) {
      const { now } = await requireChildAt(principal, childId, 'write');
      const updated = await deps.writes.run(async (change) => {
        const row = await updateChild(change.trx, childId, {
          ...(input.name !== undefined ? { name: checkName(input.name) } : {}),
          // A corrected birth date may change the age: due today, the daily run applies it.
          ...(input.birth_date !== undefined
            ? {
                birth_date: parseBirthDate(input.birth_date, now),
                next_age_change_on: now.toISOString().slice(0, 10),
              }
            : {}),
          ...(input.avatar_url !== undefined
            ? { avatar_url: checkAvatarUrl(input.avatar_url) }
            : {}),
          updated_at: now,
        });
        change.emit(row.family_id, stated('child.updated', row, now));
        change.audit({
          familyId: row.family_id,
          actor: actorOf(principal),
          action: 'child.updated',
          target: { type: 'child', id: childId },
          changes: auditChanges(childFields(input), CHILD_PERSONAL_FIELDS),
        });
        return row;
      });
      return present(updated, now);
    },
  };
}

export type ChildrenService = ReturnType<typeof createChildrenService>;
