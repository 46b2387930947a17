// Reading the credential of a request (CONTRACT.md §2): `Authorization: Bearer X` first,
// `X-Api-Key` only when Authorization is absent. The bearer's prefix says what it is.
import type { IncomingHttpHeaders } from 'node:http';
import { API_KEY_PREFIX, SECRET_PREFIXES } from './secrets.js';

export type Credential =
  | { kind: 'none' }
  /** An Authorization header that is not `Bearer <token>`. */
  | { kind: 'malformed' }
  | { kind: 'apiKey'; secret: string }
  | { kind: 'mcpToken'; secret: string }
  | { kind: 'session'; token: string };

const BEARER = /^Bearer +([^\s]+) *$/i;

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

export function readCredential(headers: IncomingHttpHeaders): Credential {
  const authorization = single(headers.authorization);
  if (authorization !== undefined) {
    const token = BEARER.exec(authorization)?.[1];
    if (token === undefined) {
      return { kind: 'malformed' };
    }
    if (token.startsWith(SECRET_PREFIXES.mcpToken)) {
      return { kind: 'mcpToken', secret: token };
    }
    if (token.startsWith(API_KEY_PREFIX)) {
      return { kind: 'apiKey', secret: token };
    }
    return { kind: 'session', token };
  }
  const apiKey = single(headers['x-api-key']);
  if (apiKey !== undefined) {
    // X-Api-Key carries only API keys: anything else there is an invalid key.
    return { kind: 'apiKey', secret: apiKey.trim() };
  }
  return { kind: 'none' };
}
