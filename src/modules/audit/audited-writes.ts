// Changes made outside the API's services (the operator commands of `npm run admin`): their
// audit entries are written in their transaction as the API's are, so an operator's change is
// on its org's chain like any other (CONTRACT.md §12.1). No event sink: these changes state
// no webhook event.
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import { type ChangeRunner, createChangeRunner } from '../../db/transaction-effects.js';
import { createAuditSink } from './sink.js';

export function createAuditedWrites(deps: { db: Db; clock: Clock }): ChangeRunner {
  const writes = createChangeRunner({ db: deps.db });
  writes.addSink(createAuditSink({ clock: deps.clock, enabled: true }));
  return writes;
}
