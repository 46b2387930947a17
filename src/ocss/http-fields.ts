// Reading an HTTP field the way RFC 9421 §2.1 and RFC 9110 §5.3 see it: names are
// case-insensitive, each field line's value is trimmed (and any obsolete line folding turned
// into one space), and repeated lines are joined with ", ". Node already joins most repeated
// request headers that way; a caller may also hand over raw arrays or mixed-case names.

export type HeaderMap = Record<string, string | string[] | undefined>;

const OBSOLETE_LINE_FOLDING = /[ \t]*\r?\n[ \t]+/g;

/** Every field of the message, lowercase name → combined value, read in one pass. */
export function combinedFields(headers: HeaderMap): Map<string, string> {
  const fields = new Map<string, string>();
  for (const [fieldName, value] of Object.entries(headers)) {
    if (value === undefined) {
      continue;
    }
    const name = fieldName.toLowerCase();
    for (const line of Array.isArray(value) ? value : [value]) {
      // Folding needs a line break: most values skip the regular expression.
      const unfolded = line.includes('\n') ? line.replace(OBSOLETE_LINE_FOLDING, ' ') : line;
      const trimmed = unfolded.trim();
      const before = fields.get(name);
      fields.set(name, before === undefined ? trimmed : `${before}, ${trimmed}`);
    }
  }
  return fields;
}

/** The combined value of field `name`, or undefined when the message has no such field. */
export function combinedFieldValue(headers: HeaderMap, name: string): string | undefined {
  return combinedFields(headers).get(name.toLowerCase());
}
