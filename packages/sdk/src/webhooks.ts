// Verifying Haven's webhook deliveries, which follow Standard Webhooks
// (https://www.standardwebhooks.com): HMAC-SHA256 over `${id}.${timestamp}.${body}`, keyed by
// the decoded `whsec_…` secret. @noble/hashes for the HMAC (synchronous), so it runs in browsers, workers and Node 20+.

import { hmac } from '@noble/hashes/hmac';
import { sha256 } from '@noble/hashes/sha2';
import { fromBase64 } from './base64.js';

/** A delivery that must not be trusted: the message says which check it failed. */
export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

export interface VerifyWebhookOptions {
  /** How far `webhook-timestamp` may be from `now`, either way; default 300 s. */
  toleranceSeconds?: number;
  /** Default: the current time. */
  now?: Date;
}

export type WebhookHeaders = Record<string, string | string[] | undefined> | Headers;

const SECRET_PREFIX = 'whsec_';
const DEFAULT_TOLERANCE_SECONDS = 5 * 60;
/** The length of an HMAC-SHA256 tag. */
const SIGNATURE_BYTES = 32;

/**
 * The parsed JSON event of a delivery whose signature and timestamp check out. `rawBody` must
 * be the body exactly as received (not re-serialized JSON). Throws WebhookVerificationError
 * for a delivery to reject, and TypeError for a secret that is not base64.
 */
export function verifyWebhook(
  secret: string,
  headers: WebhookHeaders,
  rawBody: string | Uint8Array,
  options: VerifyWebhookOptions = {},
): unknown {
  const id = singleHeader(headers, 'webhook-id');
  const timestamp = singleHeader(headers, 'webhook-timestamp');
  const signatures = headerValues(headers, 'webhook-signature');
  if (signatures.length === 0) {
    throw new WebhookVerificationError('missing webhook-signature header');
  }
  checkTimestamp(
    timestamp,
    options.now ?? new Date(),
    options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS,
  );

  const body = typeof rawBody === 'string' ? new TextEncoder().encode(rawBody) : rawBody;
  // Synchronous, as CONTRACT.md §10.2 has it (the event, or a throw): WebCrypto's HMAC is
  // async-only, so the audited @noble/hashes computes it, in browsers and Node alike.
  const expected = hmac(sha256, decodeSecret(secret), concat(`${id}.${timestamp}.`, body));
  // Every offered signature is compared in full, so the time taken says nothing about which
  // one (or how much of one) matched.
  let matched = false;
  for (const candidate of offeredSignatures(signatures)) {
    matched = constantTimeEqual(candidate, expected) || matched;
  }
  if (!matched) {
    throw new WebhookVerificationError('no matching signature: wrong secret or altered delivery');
  }
  return parseJson(body);
}

/** A header present once; a repeated id or timestamp would be ambiguous, so it is refused. */
function singleHeader(headers: WebhookHeaders, name: string): string {
  const values = headerValues(headers, name);
  if (values.length === 0) {
    throw new WebhookVerificationError(`missing ${name} header`);
  }
  if (values.length > 1) {
    throw new WebhookVerificationError(`${name} header is repeated`);
  }
  return values[0] as string;
}

/** Every non-empty value of a header, whatever the case of its name. */
function headerValues(headers: WebhookHeaders, name: string): string[] {
  if (typeof Headers !== 'undefined' && headers instanceof Headers) {
    const value = headers.get(name);
    return value === null || value.trim() === '' ? [] : [value.trim()];
  }
  const values: string[] = [];
  for (const [field, value] of Object.entries(headers)) {
    if (field.toLowerCase() !== name || value === undefined) {
      continue;
    }
    for (const line of Array.isArray(value) ? value : [value]) {
      if (line.trim() !== '') {
        values.push(line.trim());
      }
    }
  }
  return values;
}

function checkTimestamp(timestamp: string, now: Date, toleranceSeconds: number): void {
  if (!/^\d{1,15}$/.test(timestamp)) {
    throw new WebhookVerificationError('webhook-timestamp is not a number of seconds');
  }
  const age = Math.floor(now.getTime() / 1000) - Number(timestamp);
  if (age > toleranceSeconds) {
    throw new WebhookVerificationError(`webhook-timestamp is too old (${age} s ago)`);
  }
  if (-age > toleranceSeconds) {
    throw new WebhookVerificationError(`webhook-timestamp is too new (${-age} s ahead)`);
  }
}

/** `whsec_<base64>` or the bare base64: the forms Standard Webhooks libraries accept. */
function decodeSecret(secret: string): Uint8Array<ArrayBuffer> {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  let key: Uint8Array<ArrayBuffer>;
  try {
    key = fromBase64(encoded);
  } catch {
    throw new TypeError('the webhook secret is not whsec_ followed by base64');
  }
  if (key.length === 0) {
    throw new TypeError('the webhook secret is empty');
  }
  return key;
}

/**
 * The `v1` signatures in the header's space-separated list (Headers joins repeated lines with
 * ", ", hence the comma too). Other versions, and entries that are not base64, are skipped.
 */
function offeredSignatures(values: string[]): Uint8Array[] {
  const found: Uint8Array[] = [];
  for (const entry of values.join(' ').split(/[\s]+/)) {
    const [version, encoded] = entry.replace(/,$/, '').split(',');
    if (version !== 'v1' || !encoded) {
      continue;
    }
    try {
      found.push(fromBase64(encoded));
    } catch {
      // Not base64: cannot match, and another entry may.
    }
  }
  return found;
}

/** Compares every byte with no early exit; a length mismatch is not secret (always 32). */
function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== SIGNATURE_BYTES || b.length !== SIGNATURE_BYTES) {
    return false;
  }
  let difference = 0;
  for (let i = 0; i < SIGNATURE_BYTES; i++) {
    difference |= (a[i] as number) ^ (b[i] as number);
  }
  return difference === 0;
}

/** The signed bytes: the prefix as UTF-8, then the body's bytes untouched. */
function concat(prefix: string, body: Uint8Array): Uint8Array<ArrayBuffer> {
  const head = new TextEncoder().encode(prefix);
  const bytes = new Uint8Array(head.length + body.length);
  bytes.set(head, 0);
  bytes.set(body, head.length);
  return bytes;
}

function parseJson(body: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch {
    throw new WebhookVerificationError('the body is not JSON');
  }
}
