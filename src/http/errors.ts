// The one set of error classes. Services throw these; the error handler turns them into the
// house envelope {error, message, code}. Nothing else decides an error's status.
import { STATUS_CODES } from 'node:http';

export class AppError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Extra envelope fields (e.g. OCSS `class`), never used by the management plane. */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class BadRequestError extends AppError {
  constructor(message: string) {
    super(400, message);
  }
}

export class UnauthorizedError extends AppError {
  constructor(message: string) {
    super(401, message);
  }
}

export class ForbiddenError extends AppError {
  constructor(message: string) {
    super(403, message);
  }
}

export class NotFoundError extends AppError {
  constructor(message: string) {
    super(404, message);
  }
}

export class ConflictError extends AppError {
  constructor(message: string) {
    super(409, message);
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(message = 'request body too large') {
    super(413, message);
  }
}

export class UnsupportedMediaTypeError extends AppError {
  constructor(message = 'unsupported content type') {
    super(415, message);
  }
}

export class UnprocessableError extends AppError {
  constructor(message: string) {
    super(422, message);
  }
}

export class ServiceUnavailableError extends AppError {
  constructor(message = 'service unavailable') {
    super(503, message);
  }
}

export interface ErrorEnvelope {
  error: string;
  message: string;
  code: number;
  [extra: string]: unknown;
}

export function reasonPhrase(status: number): string {
  return STATUS_CODES[status] ?? 'Error';
}

export function errorEnvelope(
  status: number,
  message: string,
  extra: Record<string, unknown> = {},
): ErrorEnvelope {
  return { error: reasonPhrase(status), message, code: status, ...extra };
}

/**
 * A row looked up by id that exists for a caller only through its parent (a child through
 * its family, a device through its child): 404 `message` when the row is absent or the
 * parent is hidden from the caller, so the two cannot be told apart.
 */
export async function requireVisible<T>(
  message: string,
  row: T | undefined,
  checkParent: (row: T) => Promise<unknown>,
): Promise<T> {
  if (row === undefined) {
    throw new NotFoundError(message);
  }
  await asNotFound(message, checkParent(row));
  return row;
}

export async function asNotFound<T>(message: string, parentCheck: Promise<T>): Promise<T> {
  try {
    return await parentCheck;
  } catch (error) {
    throw error instanceof NotFoundError ? new NotFoundError(message) : error;
  }
}
