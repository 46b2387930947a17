// Statements that hot reads run on every request, built and compiled by Kysely once rather
// than per call. Building a query (immutable, frozen operation nodes) and compiling it cost
// more server CPU on the children read than everything Haven itself does for that request
// (`--cpu-prof` under `npm run bench`: ~10 % of the process's time, and much of its garbage);
// the text of the statement never changes, only its values do.
//
// The query is built once with a marker string in place of each named value and compiled;
// each marker's position among the compiled parameters is remembered, and each call fills
// those positions with its own values (every other parameter is a constant of the query and
// kept as compiled). A builder must not branch on a value (it only ever sees markers): what
// changes the statement's shape is a separate statement (see tenantRead in
// families/store.ts, one per kind of tenant).
import { type Compilable, CompiledQuery } from 'kysely';
import type { Db } from './connect.js';
import { directReadOf } from './direct-reads.js';
import { registerPrepared } from './prepared-statements.js';
import { currentRequestTransaction } from './request-transaction.js';

/**
 * The builder sees these in place of the values, and is compiled twice with two sets of
 * them: a parameter that differs between the two must be exactly a marker (a value the
 * builder transformed could not be filled in later), one that does not is a constant, and
 * the two texts must be the same (a value written into the text, or a shape that depends on
 * a value, would make them differ). A caller's value is bound as a parameter at run time
 * and never searched for markers, so a value that looks like one changes nothing.
 */
const MARKERS = ['\u0000haven-value-a:', '\u0000haven-value-b:'] as const;

/** A compiled parameter: one of the named values, or a constant of the query. */
type Slot = { name: string } | { constant: unknown };

interface Template {
  sql: string;
  slots: Slot[];
}

export interface ReusedStatement<Name extends string, Row> {
  /** The statement as it runs with `values` (what `execute` sends). */
  compile(db: Db, values: Readonly<Record<Name, string>>): CompiledQuery<Row>;
  execute(db: Db, values: Readonly<Record<Name, string>>): Promise<Row[]>;
}

function slotOf(first: unknown, second: unknown, names: readonly string[]): Slot {
  if (first === second) {
    return { constant: first };
  }
  const name = typeof first === 'string' ? first.slice(MARKERS[0].length) : '';
  if (
    first !== `${MARKERS[0]}${name}` ||
    second !== `${MARKERS[1]}${name}` ||
    !names.includes(name)
  ) {
    throw new Error(
      `reusedStatement: a value was transformed by the query builder: ${String(first)}`,
    );
  }
  return { name };
}

/**
 * A statement whose text is fixed and whose `names` are its values. Compiled on first use
 * for each database (both backends speak PostgreSQL's dialect; tests open many databases).
 */
export function reusedStatement<Name extends string, Row>(
  names: readonly Name[],
  build: (db: Db, values: Readonly<Record<Name, string>>) => Compilable<Row>,
): ReusedStatement<Name, Row> {
  const templates = new WeakMap<Db, Template>();

  function templateFor(db: Db): Template {
    let template = templates.get(db);
    if (!template) {
      const [first, second] = MARKERS.map((marker) => {
        const markers = Object.fromEntries(names.map((name) => [name, `${marker}${name}`]));
        return build(db, markers as Record<Name, string>).compile();
      }) as [CompiledQuery, CompiledQuery];
      if (first.sql !== second.sql || first.parameters.length !== second.parameters.length) {
        throw new Error('reusedStatement: a value was written into the statement text');
      }
      const slots = first.parameters.map((p, at) => slotOf(p, second.parameters[at], names));
      template = { sql: first.sql, slots };
      // The text never changes: PostgreSQL may parse and plan it once per connection.
      registerPrepared(template.sql);
      templates.set(db, template);
    }
    return template;
  }

  function parametersOf(slots: Slot[], values: Readonly<Record<Name, string>>): unknown[] {
    const parameters = new Array<unknown>(slots.length);
    for (let at = 0; at < slots.length; at++) {
      const slot = slots[at] as Slot;
      parameters[at] = 'name' in slot ? values[slot.name as Name] : slot.constant;
    }
    return parameters;
  }

  function compile(db: Db, values: Readonly<Record<Name, string>>): CompiledQuery<Row> {
    const { sql, slots } = templateFor(db);
    return CompiledQuery.raw(sql, parametersOf(slots, values)) as CompiledQuery<Row>;
  }

  return {
    compile,
    // Not async: each promise more is another microtask turn on every hot read.
    execute(db, values) {
      const direct = directReadOf(db);
      // Inside a request transaction a read must see what the request wrote: Kysely's path
      // takes it to the request's connection.
      if (!direct || currentRequestTransaction()) {
        return db.executeQuery(compile(db, values)).then((result) => result.rows);
      }
      const { sql, slots } = templateFor(db);
      return direct(sql, parametersOf(slots, values)) as Promise<Row[]>;
    },
  };
}
