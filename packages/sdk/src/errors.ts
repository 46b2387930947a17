// What a failed call throws: Haven's envelope, with what a caller acts on.

export class HavenError extends Error {
  /** HTTP status; 0 when no answer came (network error, timeout, abort). */
  readonly status: number;
  /** The envelope's `error` (the reason phrase), e.g. "Not Found". */
  readonly error: string;
  /** The `X-Request-Id` of the failed request: quote it when asking for help. */
  readonly requestId: string | undefined;
  /** Seconds to wait before retrying, from `Retry-After` (429, 503). */
  readonly retryAfter: number | undefined;
  /** The parsed answer body, as sent. */
  readonly body: unknown;

  constructor(init: {
    status: number;
    message: string;
    error: string;
    requestId?: string | undefined;
    retryAfter?: number | undefined;
    body?: unknown;
    cause?: unknown;
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'HavenError';
    this.status = init.status;
    this.error = init.error;
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter;
    this.body = init.body;
  }
}
