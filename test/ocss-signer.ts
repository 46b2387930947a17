// Signs requests the way an outside OCSS client does: with the independent
// http-message-signatures package (RFC 9421), Ed25519, over @method, @target-uri,
// content-digest and ocss-spec-version. Nothing here comes from Haven's own code.
import { createHash, type KeyObject, sign } from 'node:crypto';
import type { InjectOptions } from 'fastify';
import { httpbis } from 'http-message-signatures';

/** testConfig's PUBLIC_BASE_URL: what a signer calls, so what @target-uri must be. */
export const TEST_BASE_URL = 'http://haven.test';

export interface OcssSigner {
  keyId: string;
  privateKey: KeyObject;
}

export interface SignOptions {
  method?: 'POST' | 'PATCH';
  body: unknown;
  created?: Date;
  nonce?: string;
  /** Extra or replacing headers, applied before signing (e.g. Idempotency-Key). */
  headers?: Record<string, string>;
  /** Headers removed after signing (to test what a missing one does). */
  drop?: string[];
  /** Replaces the body after signing (a tampered request). */
  tamperedBody?: string;
  /** The server's PUBLIC_BASE_URL (default: the test apps'). */
  baseUrl?: string;
}

export async function signedRequest(
  signer: OcssSigner,
  path: string,
  options: SignOptions,
): Promise<InjectOptions> {
  const method = options.method ?? 'POST';
  const body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'Content-Digest': `sha-256=:${createHash('sha256').update(body).digest('base64')}:`,
    'OCSS-Spec-Version': 'OCSS-v1.0-pre',
    ...options.headers,
  };
  const signed = await httpbis.signMessage(
    {
      key: {
        id: signer.keyId,
        alg: 'ed25519',
        sign: async (data: Buffer) => sign(null, data, signer.privateKey),
      },
      fields: ['@method', '@target-uri', 'content-digest', 'ocss-spec-version'],
      params: ['created', 'keyid', 'alg', ...(options.nonce ? ['nonce'] : [])],
      paramValues: {
        created: options.created ?? new Date(),
        ...(options.nonce ? { nonce: options.nonce } : {}),
      },
    },
    { method, url: `${options.baseUrl ?? TEST_BASE_URL}${path}`, headers },
  );
  const sent = Object.fromEntries(
    Object.entries(signed.headers as Record<string, string>).filter(
      ([name]) => !(options.drop ?? []).includes(name.toLowerCase()),
    ),
  );
  return { method, url: path, headers: sent, payload: options.tamperedBody ?? body };
}
