// The /oauth/* routes answer OAuth-style errors {error, error_description?} (RFC 6749 §5.2,
// RFC 6750 §3; CONTRACT.md §5), not the house envelope. Only client errors take this shape:
// a 5xx still leaves as the house envelope through the app's own error handler.
import { Type } from 'typebox';

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_grant'
  | 'unsupported_grant_type'
  | 'invalid_token';

export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    /** Left out of the body when absent (the profiles 401 body is exactly {error}). */
    readonly description?: string,
    readonly status = 400,
    readonly headers: Record<string, string> = {},
  ) {
    super(description ?? error);
    this.name = 'OAuthError';
  }

  /** RFC 6750 §3.1: the resource server's answer to a missing, expired or forged token. */
  static invalidToken(): OAuthError {
    return new OAuthError('invalid_token', undefined, 401, {
      'www-authenticate': 'Bearer error="invalid_token"',
    });
  }

  body(): { error: OAuthErrorCode; error_description?: string } {
    return this.description === undefined
      ? { error: this.error }
      : { error: this.error, error_description: this.description };
  }
}

export const OAuthErrorSchema = Type.Object(
  {
    error: Type.String({
      description: 'OAuth error code',
      examples: ['invalid_grant', 'invalid_request', 'unsupported_grant_type'],
    }),
    error_description: Type.Optional(Type.String({ description: 'Human-readable reason' })),
  },
  { $id: 'OAuthError', description: 'OAuth-style error (RFC 6749 §5.2)' },
);

export const InvalidTokenSchema = Type.Object(
  { error: Type.Literal('invalid_token') },
  { description: 'Missing, expired or invalid token (RFC 6750 §3.1)' },
);
