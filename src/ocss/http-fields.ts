// Reading an HTTP field the way RFC 9421 §2.1 and RFC 9110 §5.3 see it: names are
// case-insensitive, each field line's value is trimmed (and any obsolete line folding turned
// into one space), and repeated lines are joined with ", ". Node already joins most repeated
// request headers that way; a caller may also hand over raw arrays or mixed-case names.

export type HeaderMap = Record<string, string | string[] | undefined>;

const OBSOLETE_LINE_FOLDING = /[ \t]*\r?\n[ \t]+/g;

/** The combined value of field `name`, or undefined when the message has no such field. */
export function combinedFieldValue(headers: HeaderMap, name: string): string | undefined {
  const wanted = name.toLowerCase();
  const lines: string[] = [];
  for (const [fieldName, value] of Object.entries(headers)) {
    if (fieldName.toLowerCase() !== wanted || value === undefined) {
      continue;
    }
    for (const line of Array.isArray(value) ? value : [value]) {
      lines.push(line.replace(OBSOLETE_LINE_FOLDING, ' ').trim());
    }
  }
  return lines.length === 0 ? undefined : lines.join(', ');
}
