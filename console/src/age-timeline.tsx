// A child's age bands from birth to 18 as a picture: which band the child is in, where today
// is, and when the age next changes. The child's band, age and next change come from the
// API (`age_group`, `age`, `next_age_change_on`); the bands' boundaries are DOMAIN.md's "Age
// and bands" table, which no API route lists. Today is the family's clock (a test clock's time
// in the sandbox). The same facts are its accessible name and a list for screen readers.
import type { Result } from '@haven/sdk';

type Child = Result<'getChild'>;
type AgeGroup = Child['age_group'];

/** DOMAIN.md "Age and bands": the age each band starts at, up to coming of age at 18. */
const BANDS: ReadonlyArray<{ group: AgeGroup; from: number; to: number; short: string }> = [
  { group: 'toddler', from: 0, to: 7, short: 'Toddler' },
  { group: 'child', from: 7, to: 10, short: 'Child' },
  { group: 'preteen', from: 10, to: 13, short: 'Preteen' },
  { group: 'teen', from: 13, to: 17, short: 'Teen' },
  { group: 'young_adult', from: 17, to: 18, short: 'YA' },
];
const COMING_OF_AGE = 18;

export function groupLabel(group: AgeGroup): string {
  return group === 'young_adult' ? 'young adult' : group;
}

function bandAt(age: number): (typeof BANDS)[number] | undefined {
  return BANDS.find((band) => age >= band.from && age < band.to);
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/**
 * The day a birth date turns `years` old, YYYY-MM-DD (UTC), as Haven counts it: a 29 February
 * birthday counts on 1 March in other years.
 */
export function birthdayAt(birthDate: string, years: number): string {
  const birth = new Date(birthDate);
  const year = birth.getUTCFullYear() + years;
  let month = birth.getUTCMonth();
  let day = birth.getUTCDate();
  if (month === 1 && day === 29 && !isLeapYear(year)) {
    month = 2;
    day = 1;
  }
  return new Date(Date.UTC(year, month, day)).toISOString().slice(0, 10);
}

/** The summary the picture's accessible name gives. */
export function timelineSummary(child: Child): string {
  const parts = [`Age ${child.age}, ${groupLabel(child.age_group)}`];
  if (child.effective_age !== child.age) {
    parts[0] += ` (protected as age ${child.effective_age})`;
  }
  if (child.age >= COMING_OF_AGE) {
    parts.push(`came of age on ${birthdayAt(child.birth_date, COMING_OF_AGE)}`);
    return parts.join('; ');
  }
  const nextAge = child.age + 1;
  const nextBand = bandAt(nextAge);
  parts.push(
    `next change on ${child.next_age_change_on}: age ${nextAge}, ${
      nextBand ? groupLabel(nextBand.group) : 'comes of age'
    }`,
  );
  const current = bandAt(child.age);
  if (nextBand && current && nextBand.group === current.group) {
    // The next birthday keeps the band: say when the band itself changes.
    const following = BANDS.find((band) => band.from === current.to);
    parts.push(
      following
        ? `${groupLabel(following.group)} from ${birthdayAt(child.birth_date, following.from)}`
        : `comes of age on ${birthdayAt(child.birth_date, COMING_OF_AGE)}`,
    );
  }
  return parts.join('; ');
}

const WIDTH = 480;
const HEIGHT = 100;
const PAD = 18;
const BAND_Y = 32;
const BAND_HEIGHT = 26;

const x = (age: number) => PAD + (Math.min(age, COMING_OF_AGE) / COMING_OF_AGE) * (WIDTH - 2 * PAD);

/** Text near an edge is anchored inward so that it stays inside the picture. */
function anchorAt(position: number): 'start' | 'middle' | 'end' {
  return position < 60 ? 'start' : position > WIDTH - 60 ? 'end' : 'middle';
}

/**
 * Where today falls, in years: between the last birthday and the next. `now` is the family's
 * clock as the page read it; it is held to the year the API's age names.
 */
function agePosition(child: Child, now: number): number {
  if (child.age >= COMING_OF_AGE) {
    return COMING_OF_AGE;
  }
  const last = Date.parse(birthdayAt(child.birth_date, child.age));
  const next = Date.parse(child.next_age_change_on);
  const fraction = next > last ? (now - last) / (next - last) : 0;
  return child.age + Math.min(1, Math.max(0, fraction));
}

export function AgeTimeline(props: { child: Child; today: number; id: string }) {
  const { child } = props;
  const summary = timelineSummary(child);
  const today = x(agePosition(child, props.today));
  const nextAge = child.age + 1;
  const next = nextAge <= COMING_OF_AGE ? x(nextAge) : null;
  const ticks = [...BANDS.map((band) => band.from), COMING_OF_AGE];
  const status = (band: (typeof BANDS)[number]) =>
    band.group === child.age_group ? 'now' : child.age >= band.to ? 'past' : 'to come';
  return (
    <figure class="age-timeline">
      <svg
        role="img"
        aria-label={summary}
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        class="timeline"
        id={props.id}
      >
        {BANDS.map((band) => {
          const left = x(band.from);
          const width = x(band.to) - left;
          const current = band.group === child.age_group;
          return (
            <g key={band.group}>
              <rect
                x={left}
                y={BAND_Y}
                width={width}
                height={BAND_HEIGHT}
                class={`band band-${band.group}${current ? ' band-current' : ''}`}
              >
                <title>{`${groupLabel(band.group)}: ages ${band.from} to ${band.to - 1}`}</title>
              </rect>
              <text x={left + width / 2} y={BAND_Y + 17} class="band-name">
                {band.short}
              </text>
            </g>
          );
        })}
        {ticks.map((age) => (
          <text key={age} x={x(age)} y={BAND_Y + BAND_HEIGHT + 14} class="tick">
            {age}
          </text>
        ))}
        {next !== null && (
          <g class="next-change">
            <line x1={next} x2={next} y1={BAND_Y - 4} y2={BAND_Y + BAND_HEIGHT + 4} />
            <text x={next} y={HEIGHT - 4} text-anchor={anchorAt(next)}>
              {`Next: ${child.next_age_change_on}`}
            </text>
          </g>
        )}
        <g class="today">
          <line x1={today} x2={today} y1={BAND_Y - 8} y2={BAND_Y + BAND_HEIGHT + 2} />
          <circle cx={today} cy={BAND_Y - 10} r={4} />
          <text x={today} y={BAND_Y - 18} text-anchor={anchorAt(today)}>
            {`Today: ${child.age}`}
          </text>
        </g>
      </svg>
      <ul class="visually-hidden">
        {BANDS.map((band) => (
          <li key={band.group}>
            {`${groupLabel(band.group)}, ages ${band.from} to ${band.to - 1}: from ${birthdayAt(
              child.birth_date,
              band.from,
            )} (${status(band)})`}
          </li>
        ))}
        <li>{`Comes of age on ${birthdayAt(child.birth_date, COMING_OF_AGE)}`}</li>
      </ul>
    </figure>
  );
}
