// Recognising database errors by SQLSTATE, the same on PostgreSQL and PGlite.

const UNIQUE_VIOLATION = '23505';

export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === UNIQUE_VIOLATION;
}

/** SQLSTATE classes and codes that mean "the database cannot serve right now". */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300', '53000']);
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
]);
/** What `pg` says when a connection fails or dies (it sets no code on these). */
const DRIVER_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'Query read timeout',
  'the embedded database is closed',
];

/**
 * True for failures of reaching the database (refused, reset, timed out, shutting down),
 * as opposed to errors in a statement: those are answered 503, never 500.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (code.startsWith('08') || UNAVAILABLE_STATES.has(code))) {
    return true;
  }
  if (typeof code === 'string' && NETWORK_CODES.has(code)) {
    return true;
  }
  return typeof message === 'string' && DRIVER_MESSAGES.some((text) => message.includes(text));
}
