// The timestamptz reader gives exactly what `pg`'s own parser gives, for the shapes it reads
// itself and for those it hands back.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { parseTimestampTz } from './timestamp-parser.js';

const pgParser = pg.types.getTypeParser(1184, 'text') as (text: string) => Date | number | null;

const same = (text: string) => {
  const ours = parseTimestampTz(text);
  const theirs = pgParser(text);
  expect(ours instanceof Date ? ours.getTime() : ours, text).toEqual(
    theirs instanceof Date ? theirs.getTime() : theirs,
  );
};

/** A small deterministic generator, so a failure names a reproducible case. */
function* randomTexts(count: number): Generator<string> {
  let seed = 0x2545f491;
  const next = (below: number) => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed % below;
  };
  const two = (n: number) => String(n).padStart(2, '0');
  const offsets = ['+00', '-00', '+05:30', '-08', '+14', '-03:30', '+01', '-11', '+05:45'];
  for (let i = 0; i < count; i++) {
    const year = 1000 + next(9000);
    const date = `${year}-${two(1 + next(12))}-${two(1 + next(28))}`;
    const time = `${two(next(24))}:${two(next(60))}:${two(next(60))}`;
    const digits = next(7);
    const fraction = digits === 0 ? '' : `.${String(next(10 ** digits)).padStart(digits, '0')}`;
    yield `${date} ${time}${fraction}${offsets[next(offsets.length)]}`;
  }
}

describe('timestamptz text read like pg reads it', () => {
  it('reads the shape PostgreSQL writes, every fraction length and offset', () => {
    for (const text of randomTexts(20_000)) {
      same(text);
    }
    const date = parseTimestampTz('2026-11-27 08:25:40.123456+00');
    expect(date).toEqual(new Date('2026-11-27T08:25:40.123Z'));
    expect(parseTimestampTz('2026-03-01 00:00:00+05:30')).toEqual(
      new Date('2026-02-28T18:30:00.000Z'),
    );
  });

  it('hands every other shape to pg and answers what pg answers', () => {
    for (const text of [
      'infinity',
      '-infinity',
      '0099-01-01 00:00:00+00',
      '0999-12-31 23:59:59.999+00',
      '12026-01-01 00:00:00+00',
      '2026-01-01 00:00:00+00 BC',
      '1883-11-18 11:59:59+00:53:28',
      '2026-01-01 00:00:00',
      '2026-01-01T00:00:00Z',
      '2026-1-01 00:00:00+00',
      '2026-01-01 00:00:00.+00',
      '2026-01-01 00:00:00+0',
      '2026-01-01 00:00:00*00',
      '2026-01-01 00:00:00+00:3',
      '2026-02-30 00:00:00+00',
    ]) {
      same(text);
    }
  });
});
