// One partner API call, the way every live adapter makes it: a bounded time per attempt,
// retries with backoff for what may pass (429, 5xx, a timeout, a dropped connection) that
// honour the partner's Retry-After, and the partner's answer sorted into what the adapter
// must do about it. Credentials travel in headers only and are never part of an error.
//
// Each attempt is counted and timed by platform and outcome (CONTRACT.md §13) and, with
// tracing on, is a CLIENT span of its own (a child of the job's span) whose `traceparent` the
// request carries. The span names the partner's host, the method and the answer's status;
// never the path (it holds the parent's profile id) nor a header.
import { SpanKind } from '@opentelemetry/api';
import type { PartnerCallOutcome } from '../../telemetry/metrics.js';
import type { Telemetry } from '../../telemetry/telemetry.js';
import { SpanStatusCode } from '../../telemetry/tracing.js';

/** Why a partner call did not succeed, as the adapter acts on it. */
export type PartnerErrorKind =
  /** 401/403: the credentials were refused; the connection needs new ones. */
  | 'credentials'
  /** 404: the profile (or an entry in it) is not there. */
  | 'not_found'
  /** 429, 5xx, timeouts, network errors, still so after the bounded retries. */
  | 'unavailable'
  /** Any other 4xx: the partner refused this one change. */
  | 'rejected';

export class PartnerError extends Error {
  constructor(
    readonly kind: PartnerErrorKind,
    /** The partner's HTTP status, or undefined when no answer came. */
    readonly status: number | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'PartnerError';
  }
}

export interface PartnerHttpOptions {
  /** The partner's display name, used in messages ("NextDNS answered 503: …"). */
  partner: string;
  /** The platform id (`nextdns`), as metrics and spans name the partner. */
  platform: string;
  /** Where each attempt is counted and traced; none in tests of the client alone. */
  telemetry?: Telemetry;
  baseUrl: string;
  headers: Record<string, string>;
  /** Bound on one attempt (CONTRACT §10.4 issue: 10 s a call). */
  timeoutMs: number;
  /** Attempts after the first for what may pass. */
  maxRetries: number;
  /** First backoff; doubled per retry, with jitter, when the partner names no Retry-After. */
  backoffMs: number;
  /** Longest wait honoured from a Retry-After; a longer one ends the retries. */
  maxRetryAfterMs: number;
  /** Reads the partner's error text out of an error body. */
  errorText(body: unknown): string | undefined;
}

/** Defaults for production; tests shorten the times through the same options. */
export const PARTNER_HTTP_DEFAULTS = {
  timeoutMs: 10_000,
  maxRetries: 3,
  backoffMs: 500,
  maxRetryAfterMs: 30_000,
};

export type PartnerHttpTuning = Partial<typeof PARTNER_HTTP_DEFAULTS>;

const RETRYABLE = new Set([408, 425, 429, 500, 502, 503, 504]);

/** Retry-After in seconds or as an HTTP date (RFC 9110 §10.2.3); undefined if absent or bad. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') {
    return undefined;
  }
  if (/^\d+$/.test(header.trim())) {
    return Number(header.trim()) * 1000;
  }
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function kindOf(status: number): PartnerErrorKind {
  if (status === 401 || status === 403) {
    return 'credentials';
  }
  if (status === 404) {
    return 'not_found';
  }
  return RETRYABLE.has(status) ? 'unavailable' : 'rejected';
}

async function readBody(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text === '') {
    return undefined;
  }
  try {
    return JSON.parse(text);
  } catch {
    return text.slice(0, 500);
  }
}

export type PartnerHttp = <T = unknown>(method: string, path: string, body?: unknown) => Promise<T>;

export function createPartnerHttp(options: PartnerHttpOptions): PartnerHttp {
  const base = options.baseUrl.replace(/\/+$/, '');
  const { platform, telemetry } = options;

  async function attempt(
    method: string,
    path: string,
    body: unknown,
    traceHeaders: Record<string, string>,
  ) {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...traceHeaders,
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...options.headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(options.timeoutMs),
      redirect: 'error',
    });
    return { response, body: await readBody(response) };
  }

  /** One attempt, counted, timed and (with tracing on) inside its CLIENT span. */
  function observedAttempt(method: string, path: string, body: unknown, resendCount: number) {
    if (!telemetry?.tracing.enabled) {
      return measured(method, path, body, {});
    }
    const { tracing } = telemetry;
    const url = new URL(base);
    return tracing.inSpan(
      `${method} ${platform}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'http.request.method': method,
          'server.address': url.hostname,
          'server.port': Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
          'url.scheme': url.protocol.slice(0, -1),
          'haven.partner.platform': platform,
          ...(resendCount > 0 ? { 'http.request.resend_count': resendCount } : {}),
        },
      },
      async (span) => {
        const traceHeaders: Record<string, string> = {};
        tracing.inject(traceHeaders);
        return measured(method, path, body, traceHeaders, (outcome, status) => {
          span.setAttribute('haven.partner.outcome', outcome);
          if (status !== undefined) {
            span.setAttribute('http.response.status_code', status);
          }
          if (outcome !== 'ok') {
            span.setAttribute('error.type', status === undefined ? outcome : String(status));
            span.setStatus({ code: SpanStatusCode.ERROR });
          }
        });
      },
    );
  }

  async function measured(
    method: string,
    path: string,
    body: unknown,
    traceHeaders: Record<string, string>,
    describe?: (outcome: PartnerCallOutcome, status: number | undefined) => void,
  ) {
    const started = performance.now();
    let outcome: PartnerCallOutcome = 'unavailable';
    let status: number | undefined;
    try {
      const answer = await attempt(method, path, body, traceHeaders);
      status = answer.response.status;
      outcome = answer.response.ok ? 'ok' : kindOf(status);
      return answer;
    } catch (error) {
      outcome = (error as Error).name === 'TimeoutError' ? 'timeout' : 'unavailable';
      throw error;
    } finally {
      telemetry?.metrics.partnerCall(platform, outcome, (performance.now() - started) / 1000);
      describe?.(outcome, status);
    }
  }

  return async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    let last: PartnerError | undefined;
    for (let attemptNo = 0; attemptNo <= options.maxRetries; attemptNo++) {
      let wait: number | undefined;
      try {
        const answer = await observedAttempt(method, path, body, attemptNo);
        if (answer.response.ok) {
          return answer.body as T;
        }
        const status = answer.response.status;
        const detail = options.errorText(answer.body) ?? answer.response.statusText;
        last = new PartnerError(
          kindOf(status),
          status,
          `${options.partner} answered ${status} to ${method} ${path}: ${detail}`,
        );
        if (last.kind !== 'unavailable') {
          throw last;
        }
        wait = retryAfterMs(answer.response.headers.get('retry-after'));
        if (wait !== undefined && wait > options.maxRetryAfterMs) {
          throw last; // the partner asks for longer than a job should hold a worker
        }
      } catch (error) {
        if (error instanceof PartnerError) {
          throw error;
        }
        const timedOut = (error as Error).name === 'TimeoutError';
        last = new PartnerError(
          'unavailable',
          undefined,
          timedOut
            ? `${options.partner} did not answer ${method} ${path} within ${options.timeoutMs} ms`
            : `${options.partner} could not be reached for ${method} ${path}: ${(error as Error).message}`,
        );
      }
      if (attemptNo < options.maxRetries) {
        const backoff = options.backoffMs * 2 ** attemptNo;
        await new Promise((resolve) =>
          setTimeout(resolve, wait ?? backoff / 2 + Math.random() * (backoff / 2)),
        );
      }
    }
    throw new PartnerError(
      'unavailable',
      last?.status,
      `${last?.message ?? `${options.partner} failed`} (after ${options.maxRetries + 1} attempts)`,
    );
  };
}

/**
 * Removing what is already gone is what was wanted: a 404 on a removal succeeds. (A missing
 * profile fails the run's first read, before any removal.)
 */
export async function goneIsDone(removal: Promise<unknown>): Promise<void> {
  try {
    await removal;
  } catch (error) {
    if (!(error instanceof PartnerError && error.kind === 'not_found')) {
      throw error;
    }
  }
}
