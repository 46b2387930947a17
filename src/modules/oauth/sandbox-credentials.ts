// Authorization codes and access tokens of the sandbox provider, stateless (CONTRACT.md §6):
// nothing is stored, each credential carries its account and expiry and is signed with
// HMAC-SHA256 under a secret every instance shares (service_secrets), so any instance
// redeems what another minted. The prefix is part of the signed text: a token can never
// pass as a code, nor a code as a token.
//
// Format: <prefix><base64url(JSON {a: account, x: expiry ms, n: nonce})>.<base64url(mac)>
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../clock.js';
import { isSandboxAccount, type SandboxAccount } from './profiles.js';

export type CredentialKind = 'code' | 'token';

export const CREDENTIAL_PREFIXES: Record<CredentialKind, string> = {
  code: 'sbxauth_',
  token: 'sbxtok_',
};

export const CODE_LIFETIME_SECONDS = 10 * 60;
export const TOKEN_LIFETIME_SECONDS = 3600;

const LIFETIME_MS: Record<CredentialKind, number> = {
  code: CODE_LIFETIME_SECONDS * 1000,
  token: TOKEN_LIFETIME_SECONDS * 1000,
};

/** Far above what we mint (~150 characters): anything longer is refused before any work. */
export const MAX_CREDENTIAL_LENGTH = 512;

export interface SandboxCredentials {
  mint(kind: CredentialKind, account: SandboxAccount): string;
  /** The account a valid, unexpired credential of this kind carries; otherwise undefined. */
  verify(kind: CredentialKind, presented: string): { account: SandboxAccount } | undefined;
}

interface Payload {
  a: SandboxAccount;
  x: number;
  n: string;
}

function readPayload(encoded: string): Payload | undefined {
  try {
    const payload = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as unknown;
    if (typeof payload !== 'object' || payload === null) {
      return undefined;
    }
    const { a, x, n } = payload as Record<string, unknown>;
    if (!isSandboxAccount(a) || typeof x !== 'number' || typeof n !== 'string') {
      return undefined;
    }
    return { a, x, n };
  } catch {
    return undefined;
  }
}

export function createSandboxCredentials(secret: Buffer, clock: Clock): SandboxCredentials {
  const mac = (signed: string) => createHmac('sha256', secret).update(signed).digest('base64url');

  return {
    mint(kind, account) {
      const payload: Payload = {
        a: account,
        x: clock.now().getTime() + LIFETIME_MS[kind],
        // Two credentials minted in the same millisecond still differ.
        n: randomBytes(12).toString('base64url'),
      };
      const signed =
        CREDENTIAL_PREFIXES[kind] + Buffer.from(JSON.stringify(payload)).toString('base64url');
      return `${signed}.${mac(signed)}`;
    },

    verify(kind, presented) {
      const prefix = CREDENTIAL_PREFIXES[kind];
      if (presented.length > MAX_CREDENTIAL_LENGTH || !presented.startsWith(prefix)) {
        return undefined;
      }
      const dot = presented.lastIndexOf('.');
      if (dot <= prefix.length) {
        return undefined;
      }
      const signed = presented.slice(0, dot);
      // The MAC is compared as the exact text we would have written: Node's base64url
      // decoder ignores stray characters and trailing bits, so comparing decoded bytes would
      // accept several spellings of one signature.
      const given = Buffer.from(presented.slice(dot + 1));
      const expected = Buffer.from(mac(signed));
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        return undefined;
      }
      const payload = readPayload(signed.slice(prefix.length));
      if (!payload || clock.now().getTime() >= payload.x) {
        return undefined;
      }
      return { account: payload.a };
    },
  };
}
