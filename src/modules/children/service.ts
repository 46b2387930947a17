// Children: created and changed by a family's owners and parents, read by every member.
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import { asNotFound, BadRequestError, NotFoundError } from '../../http/errors.js';
import type { FamiliesService } from '../families/service.js';
import { ageOn, bandForAge } from '../policies/age-bands.js';
import { birthDateTime, parseBirthDate } from './birth-date.js';
import {
  type ChildRow,
  deleteChild,
  findChild,
  insertChild,
  listChildren,
  updateChild,
} from './store.js';

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
  families: Pick<FamiliesService, 'requireFamily'>;
}) {
  const { db, clock } = deps;

  /** The wire shape: birth date as midnight UTC, with the age and band it gives today. */
  function present(child: ChildRow) {
    const age = ageOn(child.birth_date, clock.now());
    return {
      ...child,
      birth_date: birthDateTime(child.birth_date),
      age,
      age_group: bandForAge(Math.max(0, age)).group,
    };
  }

  async function requireChild(principal: Principal, childId: string, access: 'read' | 'write') {
    const child = await findChild(db, childId);
    if (!child) {
      throw new NotFoundError('child not found');
    }
    // A child of a family the caller cannot see does not exist for it.
    await asNotFound(
      'child not found',
      deps.families.requireFamily(principal, child.family_id, access),
    );
    return child;
  }

  return {
    requireChild,
    present,

    async createChild(
      principal: Principal,
      familyId: string,
      input: { name: string; birth_date: string; avatar_url?: string | null },
    ) {
      await deps.families.requireFamily(principal, familyId, 'write');
      const now = clock.now();
      const child: ChildRow = {
        id: randomUUID(),
        family_id: familyId,
        name: checkName(input.name),
        birth_date: parseBirthDate(input.birth_date, now),
        avatar_url: checkAvatarUrl(input.avatar_url),
        created_at: now,
        updated_at: now,
      };
      await insertChild(db, child);
      return present(child);
    },

    async listChildren(principal: Principal, familyId: string) {
      await deps.families.requireFamily(principal, familyId, 'read');
      return (await listChildren(db, familyId)).map(present);
    },

    async getChild(principal: Principal, childId: string) {
      return present(await requireChild(principal, childId, 'read'));
    },

    async updateChild(principal: Principal, childId: string, input: ChildInput) {
      await requireChild(principal, childId, 'write');
      const now = clock.now();
      const updated = await updateChild(db, childId, {
        ...(input.name !== undefined ? { name: checkName(input.name) } : {}),
        ...(input.birth_date !== undefined
          ? { birth_date: parseBirthDate(input.birth_date, now) }
          : {}),
        ...(input.avatar_url !== undefined ? { avatar_url: checkAvatarUrl(input.avatar_url) } : {}),
        updated_at: now,
      });
      return present(updated);
    },

    async deleteChild(principal: Principal, childId: string): Promise<void> {
      await requireChild(principal, childId, 'write');
      await deleteChild(db, childId);
    },
  };
}

export type ChildrenService = ReturnType<typeof createChildrenService>;
