// The SQL of Haven's children read, taken from Haven's own store functions rather than
// retyped (recorded-statements.ts), so the `pg` comparator of `npm run bench` runs exactly
// what Haven runs.
import { listChildrenRead } from '../src/modules/children/store.js';
import type { FamilyTenant } from '../src/modules/families/store.js';
import { type Statement, statementsOf } from './recorded-statements.js';

/**
 * What Haven's children read runs for a key of `tenant`: one statement, the family's
 * visibility facts and its children together (docs/decisions.md "One round trip per
 * authorized read").
 */
export function childrenReadStatements(
  familyId: string,
  tenant: FamilyTenant,
): Promise<Statement[]> {
  return statementsOf((db) => listChildrenRead(db, familyId, tenant));
}
