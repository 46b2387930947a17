// For on-device agents: poll the policy with If-None-Match and hear only of new versions.
import type { Haven } from './client.js';
import { HavenError } from './errors.js';

export interface WatchOptions {
  /** Called with each new policy (the first poll's included). */
  onPolicy(policy: unknown, etag: string | undefined): void | Promise<void>;
  /** Called when a poll fails; polling goes on. Default: ignore. */
  onError?(error: unknown): void;
  /** Between polls, in milliseconds. Default 60 000. */
  intervalMs?: number;
  /** Stops polling. */
  signal?: AbortSignal;
}

/** Polls `GET /device/policy` (a client made with `deviceKey`) until `signal` aborts. */
export async function watchDevicePolicy(haven: Haven, options: WatchOptions): Promise<void> {
  let etag: string | undefined;
  const interval = options.intervalMs ?? 60_000;
  while (!options.signal?.aborted) {
    try {
      const answer = await haven.device
        .getPolicy(undefined, {
          ...(options.signal ? { signal: options.signal } : {}),
          ...(etag ? { headers: { 'if-none-match': etag } } : {}),
        })
        .withResponse();
      if (answer.response.status !== 304) {
        etag = answer.response.headers.get('etag') ?? undefined;
        await options.onPolicy(answer.data, etag);
      }
    } catch (error) {
      if (options.signal?.aborted) {
        return;
      }
      options.onError?.(error instanceof HavenError ? error : error);
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, interval);
      options.signal?.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    });
  }
}
