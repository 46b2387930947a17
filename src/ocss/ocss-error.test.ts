import { describe, expect, it } from 'vitest';
import { classifyError } from '../http/error-handler.js';
import { AppError, errorEnvelope } from '../http/errors.js';
import { OcssError } from './ocss-error.js';

function envelopeOf(error: Error) {
  const failure = classifyError(error);
  if (!failure) {
    throw new Error('not classified');
  }
  return errorEnvelope(failure.status, failure.message, failure.extra);
}

describe('OcssError', () => {
  it.each([
    [OcssError.malformed('m'), 400, 'malformed'],
    [OcssError.signatureInvalid('m'), 401, 'signature_invalid'],
    [OcssError.unknownKey('m'), 401, 'unknown_key'],
    [OcssError.replay('m'), 409, 'replay'],
    [OcssError.rateLimited('m'), 429, 'rate_limited'],
    [OcssError.unavailable('m'), 503, 'unavailable'],
  ])('renders %s as {error, message, code, class} without failed_step', (error, status, cls) => {
    expect(error).toBeInstanceOf(AppError);
    expect(error.status).toBe(status);
    expect(error.class).toBe(cls);
    const envelope = envelopeOf(error);
    expect(envelope).toEqual({
      error: errorEnvelope(status, '').error,
      message: 'm',
      code: status,
      class: cls,
    });
    expect(Object.hasOwn(envelope, 'failed_step')).toBe(false);
  });

  it('renders a standing failure with its failed_step', () => {
    const error = OcssError.standingFailure('band_exceeds_tier', 'needs a verified signer');
    expect(envelopeOf(error)).toEqual({
      error: 'Forbidden',
      message: 'needs a verified signer',
      code: 403,
      class: 'standing_failure',
      failed_step: 'band_exceeds_tier',
    });
    expect(error.failedStep).toBe('band_exceeds_tier');
    expect(error.name).toBe('OcssError');
  });
});
