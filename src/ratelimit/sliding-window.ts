// A rolling 60-second window (CONTRACT.md §4): a request is allowed while fewer than `limit`
// requests were counted in the last 60 s. Rejected requests are not counted. The window is
// an exact log of timestamps, so it slides continuously rather than resetting each minute.

export const WINDOW_MS = 60_000;

export interface WindowDecision {
  allowed: boolean;
  limit: number;
  /** Requests left in the window after this one. */
  remaining: number;
  /** Epoch second at which the oldest counted request leaves the window. */
  resetAt: number;
  /** Seconds to wait before a retry can succeed (0 when allowed). */
  retryAfter: number;
}

/** Builds the decision from the state a store saw: what was counted and the oldest entry. */
export function decide(
  limit: number,
  now: number,
  countedBefore: number,
  oldest: number | undefined,
): WindowDecision {
  const allowed = countedBefore < limit;
  const counted = allowed ? countedBefore + 1 : countedBefore;
  const leavesAt = (oldest ?? now) + WINDOW_MS;
  return {
    allowed,
    limit,
    remaining: Math.max(0, limit - counted),
    resetAt: Math.ceil(leavesAt / 1000),
    retryAfter: allowed ? 0 : Math.max(1, Math.ceil((leavesAt - now) / 1000)),
  };
}

/** The timestamps of one bucket, oldest first, in a growable ring of numbers. */
export class TimestampLog {
  private entries: Float64Array;
  private start = 0;
  private size = 0;

  constructor(capacity = 8) {
    this.entries = new Float64Array(capacity);
  }

  get length(): number {
    return this.size;
  }

  oldest(): number | undefined {
    return this.size === 0 ? undefined : this.entries[this.start];
  }

  /** Drops entries older than the window. */
  prune(now: number): void {
    const cutoff = now - WINDOW_MS;
    while (this.size > 0 && (this.entries[this.start] ?? 0) <= cutoff) {
      this.start = (this.start + 1) % this.entries.length;
      this.size--;
    }
  }

  /** Entries stay in order even if the clock steps back: an entry never predates the last. */
  push(at: number): void {
    const last =
      this.size === 0
        ? at
        : (this.entries[(this.start + this.size - 1) % this.entries.length] ?? at);
    const entry = Math.max(at, last);
    if (this.size === this.entries.length) {
      const grown = new Float64Array(this.entries.length * 2);
      for (let i = 0; i < this.size; i++) {
        grown[i] = this.entries[(this.start + i) % this.entries.length] ?? 0;
      }
      this.entries = grown;
      this.start = 0;
    }
    this.entries[(this.start + this.size) % this.entries.length] = entry;
    this.size++;
  }
}
