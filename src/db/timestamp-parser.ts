// PostgreSQL's text for a timestamptz, read into a Date without a regular expression. Every
// row of every read carries two or more of them, and `pg`'s parser (postgres-date) runs three
// regular expressions over each and allocates their matches: on the children read that was
// ~4 % of the process's CPU and a good part of its garbage (`--cpu-prof`, the heap sampler).
// The common shape is read here by position; anything else (a year before 1000 or after
// 9999, BC, infinity, an offset with seconds, another DateStyle) goes to `pg`'s own parser,
// so the result is always the one `pg` would give (test: timestamp-parser.test.ts).
import pg from 'pg';

const TIMESTAMPTZ = 1184;

const pgParser = pg.types.getTypeParser(TIMESTAMPTZ, 'text') as (
  text: string,
) => Date | number | null;

/** The `count` decimal digits of `text` at `from` as a number, or -1 if one is not a digit. */
function digitsAt(text: string, from: number, count: number): number {
  let value = 0;
  for (let at = from; at < from + count; at++) {
    const digit = text.charCodeAt(at) - 48;
    if (digit < 0 || digit > 9) {
      return -1;
    }
    value = value * 10 + digit;
  }
  return value;
}

/** `YYYY-MM-DD HH:MM:SS[.f…]±HH[:MM]`, the shape PostgreSQL writes under DateStyle ISO. */
export function parseTimestampTz(text: string): Date | number | null {
  const length = text.length;
  if (
    length < 22 ||
    text.charCodeAt(4) !== 45 || // -
    text.charCodeAt(7) !== 45 ||
    text.charCodeAt(10) !== 32 || // space
    text.charCodeAt(13) !== 58 || // :
    text.charCodeAt(16) !== 58
  ) {
    return pgParser(text);
  }
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 2);
  const day = digitsAt(text, 8, 2);
  const hour = digitsAt(text, 11, 2);
  const minute = digitsAt(text, 14, 2);
  const second = digitsAt(text, 17, 2);
  let at = 19;
  // Milliseconds are the fraction's first three digits: a Date holds no finer, and `pg`'s
  // parser truncates the same way (checked for every fraction of up to six digits).
  let milliseconds = 0;
  if (text.charCodeAt(at) === 46) {
    at++;
    let scale = 100;
    for (; at < length; at++) {
      const digit = text.charCodeAt(at) - 48;
      if (digit < 0 || digit > 9) {
        break;
      }
      milliseconds += digit * scale;
      scale = scale === 1 ? 0 : scale / 10;
    }
  }
  const sign = text.charCodeAt(at);
  const offsetHours = digitsAt(text, at + 1, 2);
  let offsetMinutes = 0;
  if (length === at + 6 && text.charCodeAt(at + 3) === 58) {
    offsetMinutes = digitsAt(text, at + 4, 2);
  } else if (length !== at + 3) {
    return pgParser(text);
  }
  if (
    (sign !== 43 && sign !== 45) || // + or -
    year < 1000 ||
    (month | day | hour | minute | second | offsetHours | offsetMinutes) < 0
  ) {
    return pgParser(text);
  }
  const offsetMs = (offsetHours * 60 + offsetMinutes) * 60_000;
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, milliseconds);
  return new Date(sign === 43 ? utc - offsetMs : utc + offsetMs);
}

/** The parsers PostgreSQL's pool uses beyond the ones both backends share. */
export const postgresParsers: Record<number, (text: string) => unknown> = {
  [TIMESTAMPTZ]: parseTimestampTz,
};
