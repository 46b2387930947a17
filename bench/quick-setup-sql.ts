// The statement of Haven's quick setup for a new family, taken from Haven's own store
// function rather than retyped (recorded-statements.ts, as for the children read), so the
// floor of the embedded quick setup row (bench/embedded-write-server.mjs) writes exactly what
// Haven writes: the family, child, policy and 20 rules of one call, and the family's audit
// chain with the call's entry, in one statement.
import { randomUUID } from 'node:crypto';
import { ageOn, nextAgeChangeOn } from '../src/modules/age/bands.js';
import { rulesForAge } from '../src/modules/age/derivation.js';
import { newChainRows } from '../src/modules/audit/store.js';
import { type QuickSetupRows, writeQuickSetup } from '../src/modules/quick-setup/store.js';
import { type Statement, statementsOf } from './recorded-statements.js';

export interface QuickSetupStatement {
  statement: Statement;
  /**
   * The ids the statement creates (family, child, policy, rules and the audit entry): a
   * server writing it again gives each a fresh id, as each of Haven's calls does. The org's
   * id stays.
   */
  freshIds: string[];
}

/** The statement one quick setup of `childName`, born `birthDate`, sends for a key of `orgId`. */
export async function quickSetupStatement(
  orgId: string,
  childName: string,
  birthDate: string,
): Promise<QuickSetupStatement> {
  const now = new Date();
  let written: QuickSetupRows | undefined;
  const entryId = randomUUID();
  const statements = await statementsOf(async (db) => {
    written = await writeQuickSetup(
      db,
      {
        family: {
          create: {
            id: randomUUID(),
            name: `${childName}'s Family`,
            org_id: orgId,
            environment: 'test',
            test_clock_id: null,
            created_at: now,
            updated_at: now,
          },
        },
        child: { name: childName, birth_date: birthDate },
        policyName: `${childName}'s Protection Policy`,
        rules: rulesForAge(ageOn(birthDate, now), 'recommended').rules,
        strictness: 'recommended',
        childAge: ageOn(birthDate, now),
        nextAgeChangeOn: nextAgeChangeOn(birthDate, now),
        now,
      },
      async () => {},
      // An entry like Haven's (its values do not change the statement's text).
      (rows) =>
        newChainRows(
          { id: rows.family.id, kind: 'family' },
          [
            {
              familyId: rows.family.id,
              actor: { type: 'api_key', id: randomUUID(), label: 'hk_test_bench', requestId: null },
              action: 'setup.quick',
              target: { type: 'child', id: rows.child.id },
              changes: { policy_id: rows.policy.id, rules_written: rows.rules.length },
            },
          ],
          'hk_test_bench',
          now,
          () => entryId,
        ),
    );
  });
  if (!written || statements.length !== 1) {
    throw new Error(`a new family's quick setup sent ${statements.length} statements, not 1`);
  }
  return {
    statement: statements[0] as Statement,
    freshIds: [
      written.family.id,
      written.child.id,
      written.policy.id,
      ...written.rules.map((rule) => rule.id),
      entryId,
    ],
  };
}
