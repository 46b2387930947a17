// The one place a request's credential becomes a principal (CONTRACT.md §2). Routes declare
// what they accept in `config.auth` (and `config.scope` for API keys); this hook runs before
// anything else of theirs and answers 401/403 with the contract's exact messages.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppEnv } from '../config.js';
import { BadRequestError, ForbiddenError, UnauthorizedError } from '../http/errors.js';
import type { ApiKeysService, CachedKey } from '../modules/api-keys/service.js';
import type { DevicesService } from '../modules/devices/service.js';
import type { McpTokensService } from '../modules/mcp-tokens/service.js';
import type { SandboxSessionsService } from '../modules/sandbox-sessions/service.js';
import type { UsersService } from '../modules/users/service.js';
import { type Credential, readCredential } from './credentials.js';
import {
  type AuthMode,
  callerKeyOf,
  type DeviceIdentity,
  type KeyPrincipal,
  type Principal,
} from './principal.js';
import { grants, type Scope } from './scopes.js';
import { SECRET_PREFIXES } from './secrets.js';
import type { SessionVerifier } from './session-verifier.js';

export interface AuthDeps {
  appEnv: AppEnv;
  sessions: SessionVerifier;
  users: Pick<UsersService, 'resolveSessionUser'>;
  apiKeys: Pick<ApiKeysService, 'verifyKey'>;
  mcpTokens: Pick<McpTokensService, 'verifyToken'>;
  sandboxSessions: Pick<SandboxSessionsService, 'resolve'>;
  devices: Pick<DevicesService, 'verifyDeviceKey'>;
}

const MESSAGES = {
  missingHeader: 'missing authorization header',
  badFormat: 'invalid authorization header format',
  badToken: 'invalid or expired token',
  badKey: 'invalid API key',
  revokedKey: 'API key has been revoked',
  expiredKey: 'API key has expired',
  noApiScopes: 'no API scopes in context',
  missingDeviceKey: 'missing X-Device-Key header',
  badDeviceKey: 'invalid or revoked device key',
} as const;

/** Sandbox sessions are named by the caller; the name keys their data (spec: Quick setup). */
const SANDBOX_SESSION = /^[\x21-\x7e]{1,128}$/;

/** Who a request with a valid key acts for (the keyed read fast path builds it alike). */
export function keyPrincipal(key: CachedKey): KeyPrincipal {
  return {
    kind: 'key',
    keyId: key.id,
    orgId: key.org_id,
    environment: key.environment,
    scopes: key.scopes as Scope[],
    keyPrefix: key.key_prefix,
  };
}

export function installAuthentication(app: FastifyInstance, deps: AuthDeps): void {
  app.decorateRequest('principal', null);
  app.decorateRequest('authFailure', null);
  app.decorateRequest('device', null);

  async function fromSession(token: string): Promise<Principal> {
    const claims = await deps.sessions.verify(token);
    const user = await deps.users.resolveSessionUser(claims);
    return { kind: 'user', userId: user.id };
  }

  async function fromApiKey(secret: string): Promise<Principal> {
    // A live key works only on a production deployment (CONTRACT.md §2).
    if (deps.appEnv !== 'production' && secret.startsWith(SECRET_PREFIXES.liveKey)) {
      throw new UnauthorizedError(MESSAGES.badKey);
    }
    const result = await deps.apiKeys.verifyKey(secret);
    switch (result.outcome) {
      case 'unknown':
        throw new UnauthorizedError(MESSAGES.badKey);
      case 'revoked':
        throw new UnauthorizedError(MESSAGES.revokedKey);
      case 'expired':
        throw new UnauthorizedError(MESSAGES.expiredKey);
    }
    return keyPrincipal(result.key);
  }

  async function fromMcpToken(secret: string): Promise<Principal> {
    const result = await deps.mcpTokens.verifyToken(secret);
    if (result.outcome !== 'valid') {
      throw new UnauthorizedError(MESSAGES.badToken);
    }
    const { id, userId, familyId } = result.token;
    return { kind: 'mcp', tokenId: id, userId, familyId };
  }

  /** Device routes read X-Device-Key and nothing else: a bearer there is no device. */
  async function fromDeviceKey(request: FastifyRequest): Promise<DeviceIdentity> {
    const header = request.headers['x-device-key'];
    if (header === undefined) {
      throw new UnauthorizedError(MESSAGES.missingDeviceKey);
    }
    const device = await deps.devices.verifyDeviceKey(String(header).trim());
    if (!device) {
      throw new UnauthorizedError(MESSAGES.badDeviceKey);
    }
    return device;
  }

  async function anonymousSandbox(request: FastifyRequest): Promise<Principal> {
    const header = request.headers['x-sandbox-session'];
    const session = typeof header === 'string' ? header : 'default';
    if (!SANDBOX_SESSION.test(session)) {
      throw new BadRequestError('X-Sandbox-Session must be 1-128 printable characters');
    }
    return { kind: 'sandbox', session, userId: await deps.sandboxSessions.resolve(session) };
  }

  async function resolve(
    mode: Exclude<AuthMode, 'public' | 'device'>,
    credential: Credential,
    request: FastifyRequest,
  ): Promise<Principal> {
    if (mode === 'developer') {
      if (credential.kind !== 'apiKey') {
        throw new ForbiddenError(MESSAGES.noApiScopes);
      }
      return fromApiKey(credential.secret);
    }
    if (mode === 'mcp') {
      // Only an MCP token opens /mcp: a session or an API key there is no valid token.
      switch (credential.kind) {
        case 'mcpToken':
          return fromMcpToken(credential.secret);
        case 'none':
          throw new UnauthorizedError(MESSAGES.missingHeader);
        case 'malformed':
          throw new UnauthorizedError(MESSAGES.badFormat);
        default:
          throw new UnauthorizedError(MESSAGES.badToken);
      }
    }
    switch (credential.kind) {
      case 'none':
        if (mode === 'product' && deps.appEnv === 'sandbox') {
          return anonymousSandbox(request);
        }
        throw new UnauthorizedError(MESSAGES.missingHeader);
      case 'malformed':
        throw new UnauthorizedError(MESSAGES.badFormat);
      case 'session':
        return fromSession(credential.token);
      case 'apiKey':
        // Management routes never take a key (spec rule 8).
        if (mode === 'session') {
          throw new UnauthorizedError(MESSAGES.badToken);
        }
        return fromApiKey(credential.secret);
      case 'mcpToken':
        if (mode === 'session') {
          throw new UnauthorizedError(MESSAGES.badToken);
        }
        return fromMcpToken(credential.secret);
    }
  }

  // Resolving never throws: a failure is kept on the request, so that metering can still
  // count it (against the client IP) before enforceAuthentication answers 401/403.
  app.addHook('onRequest', (request, _reply, done) => {
    const mode = request.routeOptions.config?.auth ?? 'public';
    if (mode === 'public') {
      done();
      return;
    }
    if (mode === 'device') {
      fromDeviceKey(request).then(
        (device) => {
          request.device = { ...device, requestId: request.id };
          request.callerKey = `device:${device.id}`;
          done();
        },
        (error: Error) => {
          request.authFailure = error;
          done();
        },
      );
      return;
    }
    resolve(mode, readCredential(request.headers), request).then(
      (principal) => {
        principal.requestId = request.id;
        request.principal = principal;
        request.callerKey = callerKeyOf(principal);
        done();
      },
      (error: Error) => {
        request.authFailure = error;
        done();
      },
    );
  });
}

/** Answers the failures resolution found, and checks the key's scope for the route. */
export function enforceAuthentication(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.authFailure) {
      done(request.authFailure);
      return;
    }
    const scope = request.routeOptions.config?.scope;
    const principal = request.principal;
    if (scope && principal?.kind === 'key' && !grants(principal.scopes, scope)) {
      done(new ForbiddenError(`missing required scope: ${scope}`));
      return;
    }
    done();
  });
}

declare module 'fastify' {
  interface FastifyRequest {
    authFailure: Error | null;
  }
}
