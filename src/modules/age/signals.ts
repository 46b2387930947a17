// Age signals (CONTRACT.md §11.2): age ranges platforms and verifiers report for a child. The
// latest signal of each source counts; the counting ones are kept on the child so a read
// computes the effective age without another statement.

export const AGE_SIGNAL_SOURCES = [
  'apple_declared_age_range',
  'google_play_age_signals',
  'amazon_appstore',
  'windows_age_signals',
  'age_verification',
  'parent_declared',
] as const;

export type AgeSignalSource = (typeof AGE_SIGNAL_SOURCES)[number];

const KNOWN_SOURCES: ReadonlySet<string> = new Set(AGE_SIGNAL_SOURCES);

export function isAgeSignalSource(source: string): source is AgeSignalSource {
  return KNOWN_SOURCES.has(source);
}

/** One source's latest range, as the child keeps it. */
export interface CountingSignal {
  /** The age signal this is (its row in age_signals). */
  id: string;
  source: AgeSignalSource;
  age_lower: number | null;
  age_upper: number | null;
  /** ISO 8601. */
  observed_at: string;
}

/**
 * The child's counting signals once `signal` is recorded: it replaces its source's signal
 * unless that one was observed later. On an equal `observed_at` the one recorded last wins:
 * signals of a child are recorded one at a time (the child is locked), so "last" is exact,
 * where a timestamp could tie (a test clock's time stands still).
 */
export function withSignal(
  counting: readonly CountingSignal[],
  signal: CountingSignal,
): CountingSignal[] {
  const current = counting.find((entry) => entry.source === signal.source);
  if (current && Date.parse(current.observed_at) > Date.parse(signal.observed_at)) {
    return [...counting];
  }
  const next = counting.filter((entry) => entry.source !== signal.source);
  next.push(signal);
  // One order whatever the arrival order: the stored value says the same thing the same way.
  return next.sort(
    (a, b) => AGE_SIGNAL_SOURCES.indexOf(a.source) - AGE_SIGNAL_SOURCES.indexOf(b.source),
  );
}
