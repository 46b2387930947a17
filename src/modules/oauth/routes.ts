// Spec: "Reference OAuth-style connect flow"; CONTRACT.md §5 and §6. Three routes at the
// host root, sandbox only: outside the sandbox the same paths answer a plain-text 404, so
// nothing (not even the house envelope) suggests a provider lives there.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyError, FastifyInstance, FastifyReply, HTTPMethods } from 'fastify';
import { Type } from 'typebox';
import { classifyError } from '../../http/error-handler.js';
import { CONSENT_PAGE_CSP, renderConsentPage } from './consent-page.js';
import { installFormBodyParser } from './form-body.js';
import { InvalidTokenSchema, OAuthError, OAuthErrorSchema } from './oauth-errors.js';
import { DEFAULT_SANDBOX_ACCOUNT } from './profiles.js';
import { parseRedirectUri, withResponseParams } from './redirect-uri.js';
import {
  AuthorizeQuery,
  ChildProfileSchema,
  TokenRequestBody,
  TokenResponseSchema,
} from './schemas.js';
import type { SandboxOAuthProvider } from './service.js';

const TAGS = ['Sandbox OAuth provider'];

const PATHS: Array<[HTTPMethods, string]> = [
  ['GET', '/oauth/authorize'],
  ['POST', '/oauth/token'],
  ['GET', '/oauth/profiles'],
];

const BEARER = /^Bearer +(\S+) *$/i;

/** The raw query string, so the consent page can keep every parameter, in order. */
function queryOf(url: string): URLSearchParams {
  const start = url.indexOf('?');
  return new URLSearchParams(start === -1 ? '' : url.slice(start + 1));
}

/** Credentials and consent must never be cached, nor leak the URL through a Referer. */
function noStore(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
}

/**
 * CONTRACT.md §5: `/oauth/*` errors are OAuth-style `{error, error_description}`. A client
 * error raised elsewhere (a schema violation, a bad redirect_uri) becomes `invalid_request`
 * with its status kept; a 5xx goes on to the app's handler (house envelope).
 */
function renderOAuthErrors(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, _request, reply) => {
    let oauth: OAuthError;
    if (error instanceof OAuthError) {
      oauth = error;
    } else {
      const failure = classifyError(error);
      if (!failure || failure.status >= 500) {
        throw error;
      }
      oauth = new OAuthError('invalid_request', failure.message, failure.status);
    }
    return noStore(reply)
      .code(oauth.status)
      .headers(oauth.headers)
      .type('application/json; charset=utf-8')
      .send(oauth.body());
  });
}

const TOKEN_CONTENT_TYPES = 'application/x-www-form-urlencoded or application/json';

function tokenRoute(provider: SandboxOAuthProvider): FastifyPluginAsyncTypebox {
  return async (app) => {
    installFormBodyParser(app);
    // Every client error of the token endpoint (bad JSON, missing field, wrong content type,
    // too large) is an OAuth invalid_request, keeping its status (RFC 6749 §5.2).
    app.setErrorHandler((error: FastifyError) => {
      const failure = error instanceof OAuthError ? undefined : classifyError(error);
      if (failure && failure.status < 500) {
        const description =
          failure.status === 415
            ? `unsupported content type: send ${TOKEN_CONTENT_TYPES}`
            : failure.message;
        throw new OAuthError('invalid_request', description, failure.status);
      }
      throw error;
    });

    app.post(
      '/oauth/token',
      {
        config: { auth: 'public' },
        schema: {
          operationId: 'exchangeSandboxAuthorizationCode',
          summary: 'Exchange a sandbox authorization code for an access token',
          description:
            `Sandbox only. Body as ${TOKEN_CONTENT_TYPES}. Client authentication, ` +
            'redirect_uri and code_verifier are accepted and ignored: the flow is stateless. ' +
            'Errors are OAuth-style `{error, error_description}`.',
          tags: TAGS,
          consumes: ['application/x-www-form-urlencoded', 'application/json'],
          body: TokenRequestBody,
          response: {
            200: TokenResponseSchema,
            400: OAuthErrorSchema,
            413: OAuthErrorSchema,
            415: OAuthErrorSchema,
          },
        },
      },
      async (request, reply) => {
        noStore(reply).header('pragma', 'no-cache');
        return provider.grantToken(request.body);
      },
    );
  };
}

function sandboxRoutes(provider: SandboxOAuthProvider): FastifyPluginAsyncTypebox {
  return async (app) => {
    renderOAuthErrors(app);

    app.get(
      '/oauth/authorize',
      {
        config: { auth: 'public' },
        schema: {
          operationId: 'authorizeSandboxProvider',
          summary: 'Consent page, or the redirect back to the client with a code',
          description:
            'Sandbox only. Without `decision`: an HTML consent page (Approve / Deny). With ' +
            '`decision=approve`: 302 to `redirect_uri` with `code` (`sbxauth_…`, valid 10 ' +
            'minutes) and `state`; `deny`: 302 with `error=access_denied` and `state`. A bad ' +
            '`redirect_uri` or `account` is a 400 `{error: invalid_request, error_description}`, ' +
            'never a redirect.',
          tags: TAGS,
          querystring: AuthorizeQuery,
          response: {
            200: {
              description: 'The consent page',
              content: { 'text/html': { schema: Type.String() } },
            },
            400: OAuthErrorSchema,
            302: {
              type: 'null',
              description: 'Back to redirect_uri with code and state, or error and state',
              headers: { Location: Type.String({ description: 'redirect_uri plus the response' }) },
            },
          },
        },
      },
      async (request, reply) => {
        const query = request.query;
        const redirectUri = parseRedirectUri(query.redirect_uri);
        const account = query.account ?? DEFAULT_SANDBOX_ACCOUNT;
        const back = (params: Record<string, string | undefined>) =>
          noStore(reply).redirect(
            withResponseParams(redirectUri, { ...params, state: query.state }),
            302,
          );
        if (query.response_type !== undefined && query.response_type !== 'code') {
          return back({ error: 'unsupported_response_type' });
        }
        if (query.decision === 'approve') {
          return back({ code: provider.issueCode(account) });
        }
        if (query.decision === 'deny') {
          return back({ error: 'access_denied' });
        }
        const page = renderConsentPage({
          params: queryOf(request.url),
          account,
          profiles: provider.profilesFor(account),
          redirectUri,
          clientId: query.client_id,
        });
        return noStore(reply)
          .header('content-security-policy', CONSENT_PAGE_CSP)
          .header('x-frame-options', 'DENY')
          .type('text/html; charset=utf-8')
          .send(page);
      },
    );

    await app.register(tokenRoute(provider));

    app.get(
      '/oauth/profiles',
      {
        config: { auth: 'public' },
        schema: {
          operationId: 'listSandboxChildProfiles',
          summary: 'The child profiles the sandbox access token grants (bare array)',
          description:
            'Sandbox only; unmetered. `Authorization: Bearer <sbxtok_…>`. Without a valid ' +
            'token: 401 `{"error":"invalid_token"}` with `WWW-Authenticate`.',
          tags: TAGS,
          response: { 200: Type.Array(ChildProfileSchema), 401: InvalidTokenSchema },
        },
      },
      async (request, reply) => {
        const header = request.headers.authorization;
        const token = header === undefined ? undefined : BEARER.exec(header)?.[1];
        const grant = token === undefined ? undefined : provider.verifyAccessToken(token);
        if (!grant) {
          throw OAuthError.invalidToken();
        }
        noStore(reply);
        return provider.profilesFor(grant.account);
      },
    );
  };
}

/** Outside the sandbox: the same paths, undocumented, answering before any body is read. */
async function notFoundRoutes(app: FastifyInstance): Promise<void> {
  const notFound = async (_request: unknown, reply: FastifyReply) =>
    reply.code(404).type('text/plain; charset=utf-8').send('Not Found');
  for (const [method, url] of PATHS) {
    app.route({
      method,
      url,
      config: { auth: 'public' },
      schema: { hide: true },
      onRequest: notFound,
      handler: notFound,
    });
  }
}

export function sandboxOAuthRoutes(provider: SandboxOAuthProvider): FastifyPluginAsyncTypebox {
  return provider.enabled ? sandboxRoutes(provider) : notFoundRoutes;
}
