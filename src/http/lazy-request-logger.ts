// Every request gets its own logger (Fastify's `request.log`, bound to the request id), but
// almost no request writes through it: the one line per request is the access line
// (access-log.ts), and `request.log` speaks only for errors. Making pino's child costs on
// every request all the same (its bindings serialised, and with redaction configured the
// redaction run over them: ~3 % of the server's time on a keyed read, `--cpu-prof` under
// `npm run bench`), so the child is made on first use and the request carries only this.
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import type { Bindings, ChildLoggerOptions, LevelWithSilentOrString } from 'pino';

type Method = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

class LazyChildLogger {
  #child: FastifyBaseLogger | undefined;
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  #real(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings, this.#options);
    return this.#child;
  }

  #write(method: Method, args: unknown[]): void {
    (this.#real()[method] as (...args: unknown[]) => void)(...args);
  }

  get level(): LevelWithSilentOrString {
    return this.#real().level;
  }

  set level(level: LevelWithSilentOrString) {
    this.#real().level = level;
  }

  // Methods on the prototype: a field per method would be a closure per request.
  fatal(...args: unknown[]): void {
    this.#write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#write('error', args);
  }
  warn(...args: unknown[]): void {
    this.#write('warn', args);
  }
  info(...args: unknown[]): void {
    this.#write('info', args);
  }
  debug(...args: unknown[]): void {
    this.#write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#write('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: a request's logger, made when first written to. */
export const lazyChildLoggerFactory: NonNullable<FastifyServerOptions['childLoggerFactory']> = (
  logger,
  bindings,
  options,
) => new LazyChildLogger(logger, bindings, options) as unknown as FastifyBaseLogger;
