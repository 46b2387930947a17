// Age and its band (DOMAIN.md "Age and bands"): whole years since the birth date in UTC, one
// less if this year's birthday has not come yet.

export type AgeGroup = 'toddler' | 'child' | 'preteen' | 'teen' | 'young_adult';
export type FilterLevel = 'strict' | 'moderate' | 'light';

export interface AgeBand {
  group: AgeGroup;
  dailyMinutes: number;
  bedtime: { weekdayEnd: string; weekendEnd: string };
  filterLevel: FilterLevel;
  usageTimerMinutes: number;
}

const BANDS: ReadonlyArray<{ from: number; band: AgeBand }> = [
  {
    from: 17,
    band: {
      group: 'young_adult',
      dailyMinutes: 240,
      bedtime: { weekdayEnd: '23:00', weekendEnd: '24:00' },
      filterLevel: 'light',
      usageTimerMinutes: 60,
    },
  },
  {
    from: 13,
    band: {
      group: 'teen',
      dailyMinutes: 180,
      bedtime: { weekdayEnd: '22:00', weekendEnd: '23:00' },
      filterLevel: 'light',
      usageTimerMinutes: 30,
    },
  },
  {
    from: 10,
    band: {
      group: 'preteen',
      dailyMinutes: 120,
      bedtime: { weekdayEnd: '21:00', weekendEnd: '22:00' },
      filterLevel: 'moderate',
      usageTimerMinutes: 15,
    },
  },
  {
    from: 7,
    band: {
      group: 'child',
      dailyMinutes: 90,
      bedtime: { weekdayEnd: '20:00', weekendEnd: '21:00' },
      filterLevel: 'strict',
      usageTimerMinutes: 15,
    },
  },
  {
    from: 0,
    band: {
      group: 'toddler',
      dailyMinutes: 60,
      bedtime: { weekdayEnd: '19:00', weekendEnd: '20:00' },
      filterLevel: 'strict',
      usageTimerMinutes: 15,
    },
  },
];

export function bandForAge(age: number): AgeBand {
  const row = BANDS.find((candidate) => age >= candidate.from) ?? BANDS[BANDS.length - 1];
  if (!row) {
    throw new Error('age bands are empty');
  }
  return row.band;
}

/** `birthDate` is `YYYY-MM-DD` (already validated). */
export function ageOn(birthDate: string, now: Date): number {
  // Read in place: this runs for every child a read returns.
  const year = Number(birthDate.slice(0, 4));
  const month = Number(birthDate.slice(5, 7));
  const day = Number(birthDate.slice(8, 10));
  let age = now.getUTCFullYear() - year;
  const beforeBirthday =
    now.getUTCMonth() + 1 < month || (now.getUTCMonth() + 1 === month && now.getUTCDate() < day);
  if (beforeBirthday) {
    age--;
  }
  return age;
}

/** Whether `year` has a 29 February. */
function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** 'YYYY-MM-DD' of a month and day in `year` (a 29 February birthday is 1 March otherwise). */
function birthdayIn(year: number, month: number, day: number): string {
  const [m, d] = month === 2 && day === 29 && !isLeapYear(year) ? [3, 1] : [month, day];
  return `${String(year).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

/**
 * The day (UTC) the age `ageOn` gives next changes: the next birthday after `now`'s day, a
 * 29 February birthday counting on 1 March in other years (as `ageOn` counts it).
 */
export function nextAgeChangeOn(birthDate: string, now: Date): string {
  const month = Number(birthDate.slice(5, 7));
  const day = Number(birthDate.slice(8, 10));
  const today = now.toISOString().slice(0, 10);
  const year = now.getUTCFullYear();
  const thisYear = birthdayIn(year, month, day);
  return thisYear > today ? thisYear : birthdayIn(year + 1, month, day);
}
