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

/** One source's latest range, as the child keeps it. */
export interface CountingSignal {
  source: AgeSignalSource;
  age_lower: number | null;
  age_upper: number | null;
  observed_at: string;
}
