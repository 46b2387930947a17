// The rows of a prepared statement have the same columns every time, but `pg` works them out
// again for every result: on each RowDescription it looks up a parser per column and builds
// the empty row every row is copied from, in an object it fills in dictionary mode, so each
// row's copy takes V8's slow path too. On the children read (eleven columns) that was ~6 %
// of the process's CPU (`--cpu-prof`, `npm run bench`). A direct read's result keeps, per
// statement text, the column list it last saw with its parsers and a fast empty row, and
// reuses them whenever the description is the same (a migration that changes the columns
// makes it different, and it is worked out again).
//
// This reaches into `pg`'s Result (`_parsers`, `_prebuiltEmptyResultObject`, `_types`), which
// is why `pg` is pinned to an exact version; row-shapes.test.ts reads through it, rows and
// types alike, so an upgrade that moves them fails there first.
import pg from 'pg';

interface Shape {
  fields: pg.FieldDef[];
  parsers: Array<(text: string) => unknown>;
  empty: Record<string, null>;
}

/** What of `pg`'s Result this reads and writes. */
interface ResultInternals {
  fields: pg.FieldDef[];
  _parsers: Array<(text: string) => unknown> | undefined;
  _prebuiltEmptyResultObject: Record<string, null> | null;
  _types: { getTypeParser(oid: number, format: string): (text: string) => unknown };
  addFields(fields: pg.FieldDef[]): void;
}

const Result = pg.Result as unknown as new (
  rowMode: string | undefined,
  types: unknown,
) => ResultInternals;

function sameFields(known: pg.FieldDef[], fields: pg.FieldDef[]): boolean {
  if (known.length !== fields.length) {
    return false;
  }
  for (let at = 0; at < fields.length; at++) {
    const a = known[at] as pg.FieldDef;
    const b = fields[at] as pg.FieldDef;
    if (a.name !== b.name || a.dataTypeID !== b.dataTypeID || a.format !== b.format) {
      return false;
    }
  }
  return true;
}

/** The shapes seen by one pool's reads (parsers come from that pool's types). */
export type RowShapes = Map<string, Shape>;

/** A result for a read of `text` that reuses the shape `shapes` holds for it. */
export class ShapedResult extends Result {
  readonly #shapes: RowShapes;
  readonly #text: string;

  constructor(shapes: RowShapes, text: string) {
    super(undefined, undefined);
    this.#shapes = shapes;
    this.#text = text;
  }

  override addFields(fields: pg.FieldDef[]): void {
    const known = this.#shapes.get(this.#text);
    this.fields = fields;
    if (known && sameFields(known.fields, fields)) {
      this._parsers = known.parsers;
      this._prebuiltEmptyResultObject = known.empty;
      return;
    }
    // Filled in column order with no other keys: a fast-mode object, cheap to copy.
    const empty: Record<string, null> = {};
    const parsers = fields.map((field) => {
      empty[field.name] = null;
      return this._types.getTypeParser(field.dataTypeID, field.format || 'text');
    });
    this._parsers = parsers;
    this._prebuiltEmptyResultObject = empty;
    this.#shapes.set(this.#text, { fields, parsers, empty });
  }
}
