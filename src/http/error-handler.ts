// Every failure leaves as the house envelope {error, message, code}. Unknown errors are a
// 500 that says only `internal error`; the cause goes to the log under the request id.

import type {
  FastifyBaseLogger,
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
} from 'fastify';
import { isDatabaseUnavailable } from '../db/errors.js';
import { AppError, errorEnvelope } from './errors.js';
import { BODY_LIMIT_BYTES } from './json-body.js';
import { ocssClassFor } from './ocss-route.js';
import { validationMessage } from './validation-message.js';

interface Failure {
  status: number;
  message: string;
  extra?: Record<string, unknown>;
}

/** Fastify's own client errors, by code, with the words a user should read. */
const FRAMEWORK_ERRORS: Record<string, (error: FastifyError) => Failure> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => ({
    status: 415,
    message: 'unsupported content type: send application/json',
  }),
  FST_ERR_CTP_INVALID_TYPE: () => ({
    status: 415,
    message: 'unsupported content type: send application/json',
  }),
  FST_ERR_CTP_BODY_TOO_LARGE: () => ({
    status: 413,
    message: `request body exceeds ${BODY_LIMIT_BYTES} bytes`,
  }),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => ({ status: 400, message: 'invalid JSON body' }),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => ({
    status: 400,
    message: 'Content-Length does not match the body',
  }),
  FST_ERR_CTP_INVALID_JSON_BODY: () => ({ status: 400, message: 'invalid JSON body' }),
  FST_ERR_BAD_URL: () => ({ status: 400, message: 'malformed URL' }),
  FST_ERR_ASYNC_CONSTRAINT: () => ({ status: 400, message: 'invalid request' }),
};

export function classifyError(error: FastifyError | Error): Failure | undefined {
  if (error instanceof AppError) {
    return { status: error.status, message: error.message, extra: error.extra };
  }
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    return {
      status: 400,
      message: validationMessage(fastifyError.validation, fastifyError.validationContext),
    };
  }
  const known = fastifyError.code ? FRAMEWORK_ERRORS[fastifyError.code] : undefined;
  if (known) {
    return known(fastifyError);
  }
  if (isDatabaseUnavailable(error)) {
    return { status: 503, message: 'database unavailable: retry shortly' };
  }
  const status = fastifyError.statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    // Some other client error raised by a plugin: keep its status, not its wording.
    return { status, message: errorEnvelope(status, '').error.toLowerCase() };
  }
  return undefined;
}

export function sendFailure(reply: FastifyReply, failure: Failure): FastifyReply {
  return reply
    .code(failure.status)
    .type('application/json; charset=utf-8')
    .send(errorEnvelope(failure.status, failure.message, failure.extra));
}

/**
 * What `error` answers, given its classification, logged as it deserves: a client error not
 * at all, a 5xx we raised on purpose briefly, anything else with its cause.
 */
export function failureToAnswer(
  error: Error,
  failure: Failure | undefined,
  log: FastifyBaseLogger,
): Failure {
  if (failure && failure.status < 500) {
    return failure;
  }
  if (failure && error instanceof AppError) {
    // A condition we raised on purpose (a cap reached): no stack, and a flood of them must
    // not flood the log.
    log.info({ status: failure.status }, failure.message);
    return failure;
  }
  if (failure) {
    log.warn({ err: error, status: failure.status }, failure.message);
    return failure;
  }
  log.error({ err: error }, 'internal error');
  return { status: 500, message: 'internal error' };
}

export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const failure = classifyError(error);
    const ocssClass = failure && !failure.extra?.class && ocssClassFor(request, failure.status);
    if (failure && ocssClass) {
      failure.extra = { ...failure.extra, class: ocssClass };
    }
    return sendFailure(reply, failureToAnswer(error, failure, request.log));
  });

  app.setNotFoundHandler((_request, reply) =>
    sendFailure(reply, { status: 404, message: 'route not found' }),
  );
}
