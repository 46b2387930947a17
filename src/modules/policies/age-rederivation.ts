// Which `age` rules of a policy a new age changes: each rule generation wrote (origin `age`)
// whose enabled flag or config differs from what generation gives now. A `custom` rule is a
// person's choice and never touched; a category without a rule (a person deleted it) is not
// brought back.
import { isDeepStrictEqual } from 'node:util';
import type { Db } from '../../db/connect.js';
import { rulesForAge, type Strictness } from '../age/derivation.js';
import { listRules, type RuleWrite } from './store.js';

export async function changedAgeRules(
  db: Db,
  policyId: string,
  age: number,
  strictness: Strictness,
): Promise<RuleWrite[]> {
  const wanted = new Map(rulesForAge(age, strictness).rules.map((rule) => [rule.category, rule]));
  const changed: RuleWrite[] = [];
  for (const rule of await listRules(db, policyId)) {
    const generated = wanted.get(rule.category);
    if (
      rule.origin === 'age' &&
      generated &&
      (generated.enabled !== rule.enabled || !isDeepStrictEqual(generated.config, rule.config))
    ) {
      changed.push(generated);
    }
  }
  return changed;
}
