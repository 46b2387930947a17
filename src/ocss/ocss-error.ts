// The failures of the OCSS federation (CONTRACT §9). Each carries its `class`, and a
// standing failure its `failed_step`, in `extra` so the house error handler renders
// {error, message, code, class, failed_step?} without knowing anything about OCSS.
import { AppError } from '../http/errors.js';

export const OCSS_ERROR_STATUS = {
  malformed: 400,
  signature_invalid: 401,
  unknown_key: 401,
  standing_failure: 403,
  replay: 409,
  rate_limited: 429,
  unavailable: 503,
} as const;

export type OcssErrorClass = keyof typeof OCSS_ERROR_STATUS;

export type StandingFailureStep =
  | 'authority_binding'
  | 'scope'
  | 'unregistered_slug'
  | 'band_exceeds_tier';

export class OcssError extends AppError {
  readonly class: OcssErrorClass;
  readonly failedStep: StandingFailureStep | undefined;

  // The overloads keep `failed_step` to standing failures; the static constructors read better.
  constructor(errorClass: 'standing_failure', message: string, failedStep: StandingFailureStep);
  constructor(errorClass: Exclude<OcssErrorClass, 'standing_failure'>, message: string);
  constructor(errorClass: OcssErrorClass, message: string, failedStep?: StandingFailureStep) {
    // `failed_step` is left out entirely, never null, when the class has no step.
    const extra: Record<string, unknown> =
      failedStep === undefined
        ? { class: errorClass }
        : { class: errorClass, failed_step: failedStep };
    super(OCSS_ERROR_STATUS[errorClass], message, extra);
    this.class = errorClass;
    this.failedStep = failedStep;
  }

  static malformed(message: string): OcssError {
    return new OcssError('malformed', message);
  }

  static signatureInvalid(message: string): OcssError {
    return new OcssError('signature_invalid', message);
  }

  static unknownKey(message: string): OcssError {
    return new OcssError('unknown_key', message);
  }

  static standingFailure(step: StandingFailureStep, message: string): OcssError {
    return new OcssError('standing_failure', message, step);
  }

  static replay(message: string): OcssError {
    return new OcssError('replay', message);
  }

  static rateLimited(message: string): OcssError {
    return new OcssError('rate_limited', message);
  }

  static unavailable(message: string): OcssError {
    return new OcssError('unavailable', message);
  }
}
