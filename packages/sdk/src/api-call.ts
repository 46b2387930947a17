// What every SDK method returns: awaitable for the body, and `.withResponse()` for the body
// with what the headers say (request id, rate limits, an idempotent replay).

export interface RateLimit {
  limit: number;
  remaining: number;
  /** Unix seconds when the window resets. */
  reset: number;
}

export interface WithResponse<T> {
  data: T;
  response: Response;
  requestId: string | undefined;
  /** True when Haven answered from an earlier request's receipt (`OCSS-Replay: original`). */
  replayed: boolean;
  rateLimit: RateLimit | undefined;
}

export class ApiCall<T> implements PromiseLike<T> {
  private settled: Promise<WithResponse<T>> | undefined;

  constructor(private readonly run: () => Promise<WithResponse<T>>) {}

  /** The body together with the response it came in. */
  withResponse(): Promise<WithResponse<T>> {
    // Started once, however many times it is awaited.
    this.settled ??= this.run();
    return this.settled;
  }

  // biome-ignore lint/suspicious/noThenProperty: a thenable on purpose, so that `await haven.x.y()` gives the body while `.withResponse()` stays available
  then<A = T, B = never>(
    onFulfilled?: ((value: T) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.withResponse()
      .then((result) => result.data)
      .then(onFulfilled, onRejected);
  }

  catch<B = never>(onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<T | B> {
    return this.then(undefined, onRejected);
  }

  finally(onFinally?: (() => void) | null): Promise<T> {
    return this.then().finally(onFinally);
  }
}

export function rateLimitOf(headers: Headers): RateLimit | undefined {
  const limit = headers.get('x-ratelimit-limit');
  const remaining = headers.get('x-ratelimit-remaining');
  const reset = headers.get('x-ratelimit-reset');
  if (limit === null || remaining === null || reset === null) {
    return undefined;
  }
  return { limit: Number(limit), remaining: Number(remaining), reset: Number(reset) };
}
