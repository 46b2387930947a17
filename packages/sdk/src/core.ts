// The request engine under every generated method: the route twin the credential calls for,
// the credential's header, an Idempotency-Key per write kept across its retries, retries with
// jittered backoff on what may pass (network errors, 429 after Retry-After, 502-504), a
// timeout per attempt, the caller's AbortSignal, RFC 9421 signatures for the OCSS verbs, and
// Haven's error envelope as a HavenError.
import { ApiCall, rateLimitOf, type WithResponse } from './api-call.js';
import { HavenError } from './errors.js';
import { type CursorPage, PagedCall } from './paged-call.js';
import { type Signer, signRequest } from './signer.js';

export interface OperationSpec {
  id: string;
  method: string;
  /** The /api/v1 path template. */
  path: string;
  /** A /api/v1/developer twin exists (what an API key calls). */
  twin: boolean;
  /** An OCSS verb: signed with the client's `signer`. */
  signed?: boolean;
}

export interface RequestOptions {
  signal?: AbortSignal;
  /** Overrides the client's timeout for each attempt of this call. */
  timeoutMs?: number;
  /** Overrides the client's retries for this call. */
  maxRetries?: number;
  /** A write's Idempotency-Key (default: a new random one per call, kept across retries). */
  idempotencyKey?: string;
  headers?: Record<string, string>;
}

export type Credential =
  | { kind: 'apiKey'; value: string }
  | { kind: 'bearer'; value: string }
  | { kind: 'sandboxSession'; value: string }
  | { kind: 'deviceKey'; value: string }
  | { kind: 'none' };

export interface CoreConfig {
  baseUrl: string;
  credential: Credential;
  signer: Signer | undefined;
  maxRetries: number;
  timeoutMs: number;
  fetch: typeof fetch;
}

const API = '/api/v1';
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const RETRYABLE_STATUS = new Set([429, 502, 503, 504]);
const PAGE_SIZE = 100;
const MAX_BACKOFF_MS = 8_000;

/** Seconds from Retry-After (seconds or an HTTP date). */
function retryAfterSeconds(header: string | null): number | undefined {
  if (header === null) {
    return undefined;
  }
  if (/^\d+$/.test(header.trim())) {
    return Number(header.trim());
  }
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function randomKey(): string {
  return globalThis.crypto.randomUUID();
}

function queryString(query: Record<string, unknown> | undefined): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === null) {
      continue;
    }
    for (const one of Array.isArray(value) ? value : [value]) {
      params.append(name, String(one));
    }
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

export class Core {
  constructor(private readonly config: CoreConfig) {}

  private credentialHeaders(): Record<string, string> {
    const { credential } = this.config;
    switch (credential.kind) {
      case 'apiKey':
      case 'bearer':
        return { authorization: `Bearer ${credential.value}` };
      case 'sandboxSession':
        return { 'x-sandbox-session': credential.value };
      case 'deviceKey':
        return { 'x-device-key': credential.value };
      case 'none':
        return {};
    }
  }

  private urlOf(spec: OperationSpec, pathValues: string[], query: object | undefined): string {
    let index = 0;
    let path = spec.path.replace(/\{[^}]+\}/g, () =>
      encodeURIComponent(String(pathValues[index++] ?? '')),
    );
    if (this.config.credential.kind === 'apiKey' && spec.twin) {
      path = `${API}/developer${path.slice(API.length)}`;
    }
    return `${this.config.baseUrl}${path}${queryString(query as Record<string, unknown>)}`;
  }

  call<T>(
    spec: OperationSpec,
    pathValues: string[],
    body: unknown,
    query: object | undefined,
    options: RequestOptions = {},
  ): ApiCall<T> {
    return new ApiCall(() => this.send<T>(spec, pathValues, body, query, options));
  }

  private async send<T>(
    spec: OperationSpec,
    pathValues: string[],
    body: unknown,
    query: object | undefined,
    options: RequestOptions,
  ): Promise<WithResponse<T>> {
    const url = this.urlOf(spec, pathValues, query);
    const text = body === undefined ? (spec.signed ? '{}' : undefined) : JSON.stringify(body);
    const headers: Record<string, string> = {
      accept: 'application/json',
      ...this.credentialHeaders(),
      ...(text === undefined ? {} : { 'content-type': 'application/json' }),
      ...(WRITES.has(spec.method)
        ? { 'idempotency-key': options.idempotencyKey ?? randomKey() }
        : {}),
      ...options.headers,
    };
    if (spec.signed && !this.config.signer) {
      throw new HavenError({
        status: 0,
        error: 'Signer Required',
        message: `${spec.id} is an OCSS verb: create the client with a signer ({ keyId, privateKey })`,
      });
    }
    const retries = options.maxRetries ?? this.config.maxRetries;
    for (let attempt = 0; ; attempt++) {
      // A signature is good for one request (its nonce): each attempt is signed anew.
      const signed =
        spec.signed && this.config.signer
          ? await signRequest(this.config.signer, {
              method: spec.method,
              url,
              headers,
              body: text ?? '',
            })
          : {};
      let response: Response;
      try {
        response = await this.config.fetch(url, {
          method: spec.method,
          headers: { ...headers, ...signed },
          body: text,
          signal: this.attemptSignal(options),
        });
      } catch (error) {
        if (options.signal?.aborted) {
          throw error; // the caller gave up: never retried
        }
        if (attempt < retries) {
          await sleep(this.backoff(attempt), options.signal);
          continue;
        }
        throw new HavenError({
          status: 0,
          error: (error as Error)?.name === 'TimeoutError' ? 'Timeout' : 'Network Error',
          message: `${spec.method} ${url} failed after ${attempt + 1} attempts: ${(error as Error)?.message ?? String(error)}`,
          cause: error,
        });
      }
      if (RETRYABLE_STATUS.has(response.status) && attempt < retries) {
        const wait = retryAfterSeconds(response.headers.get('retry-after'));
        await response.body?.cancel();
        await sleep(wait === undefined ? this.backoff(attempt) : wait * 1000, options.signal);
        continue;
      }
      return this.read<T>(response);
    }
  }

  private attemptSignal(options: RequestOptions): AbortSignal {
    const timeout = AbortSignal.timeout(options.timeoutMs ?? this.config.timeoutMs);
    return options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  }

  private backoff(attempt: number): number {
    const ceiling = Math.min(MAX_BACKOFF_MS, 500 * 2 ** attempt);
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }

  private async read<T>(response: Response): Promise<WithResponse<T>> {
    const requestId = response.headers.get('x-request-id') ?? undefined;
    const text = response.status === 204 || response.status === 304 ? '' : await response.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = text;
    }
    if (!response.ok && response.status !== 304) {
      const envelope = (parsed ?? {}) as { message?: unknown; error?: unknown };
      throw new HavenError({
        status: response.status,
        message: typeof envelope.message === 'string' ? envelope.message : response.statusText,
        error: typeof envelope.error === 'string' ? envelope.error : response.statusText,
        requestId,
        retryAfter: retryAfterSeconds(response.headers.get('retry-after')),
        body: parsed,
      });
    }
    return {
      data: parsed as T,
      response,
      requestId,
      replayed: response.headers.get('ocss-replay') === 'original',
      rateLimit: rateLimitOf(response.headers),
    };
  }

  /**
   * A list paged by cursor: the page `query` asks for, and each next one `before` the last
   * page's `next_before` (same `limit`, options and credential), its items in `itemsField`.
   */
  cursorPaged<Page extends CursorPage, Item>(
    spec: OperationSpec,
    pathValues: string[],
    query: { before?: string } | undefined,
    itemsField: string,
    options: RequestOptions = {},
  ): PagedCall<Page, Item> {
    return new PagedCall<Page, Item>(
      () => this.send<Page>(spec, pathValues, undefined, query, options),
      (before) => this.call<Page>(spec, pathValues, undefined, { ...query, before }, options),
      (page) => (page as unknown as Record<string, readonly Item[]>)[itemsField] ?? [],
    );
  }

  /** Every item of an offset-paginated list, fetched a page at a time. */
  async *paginate<T>(
    page: (window: { limit: number; offset: number }) => ApiCall<unknown>,
    pageSize: number = PAGE_SIZE,
  ): AsyncIterable<T> {
    for (let offset = 0; ; ) {
      const items = (await page({ limit: pageSize, offset })) as T[];
      yield* items;
      if (items.length < pageSize) {
        return;
      }
      offset += items.length;
    }
  }
}
