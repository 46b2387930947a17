// Birth dates as the contract reads them (CONTRACT.md §7): strictly `YYYY-MM-DD` and a real
// calendar date (400), not in the future and not more than 25 years back (422).
import { BadRequestError, UnprocessableError } from '../../http/errors.js';

const FORMAT = /^(\d{4})-(\d{2})-(\d{2})$/;
const MAX_CHILD_AGE_YEARS = 25;

export function parseBirthDate(value: string, now: Date): string {
  const match = FORMAT.exec(value);
  const date = match
    ? new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])))
    : undefined;
  // Date.UTC rolls 2023-02-30 over to March: a real date reads back the same.
  if (!date || date.toISOString().slice(0, 10) !== value) {
    throw new BadRequestError('invalid birth_date format, use YYYY-MM-DD');
  }
  const today = now.toISOString().slice(0, 10);
  if (value > today) {
    throw new UnprocessableError('birth date cannot be in the future');
  }
  const oldest = new Date(now);
  oldest.setUTCFullYear(oldest.getUTCFullYear() - MAX_CHILD_AGE_YEARS);
  if (value < oldest.toISOString().slice(0, 10)) {
    throw new UnprocessableError('birth date seems too far in the past for a child');
  }
  return value;
}

/** The contract returns the date as a date-time at midnight UTC. */
export function birthDateTime(birthDate: string): string {
  return `${birthDate}T00:00:00.000Z`;
}
