// Standard Webhooks signing (https://www.standardwebhooks.com, CONTRACT.md §8): any Standard
// Webhooks library verifies what this produces, given the `whsec_…` secret.
import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';
/** 24 bytes: inside the 24-64 byte range the specification recommends for secrets. */
const SECRET_BYTES = 24;

/** `whsec_` + base64 of random bytes: the form Standard Webhooks libraries take as is. */
export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** A message id, the `webhook-id` header: the same on every attempt of one message. */
export function newMessageId(): string {
  return `msg_${randomBytes(16).toString('base64url')}`;
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** HMAC-SHA256 over `id.timestamp.body`, keyed by the secret's decoded bytes. */
export function signMessage(
  secret: string,
  messageId: string,
  at: Date,
  body: string,
): SignedHeaders {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const signature = createHmac('sha256', key)
    .update(`${messageId}.${timestamp}.${body}`)
    .digest('base64');
  return {
    'webhook-id': messageId,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${signature}`,
  };
}

/** What a sealed secret is bound to (the cipher's AAD): its webhook, apart from credentials. */
export const secretBinding = (webhookId: string) => `webhook:${webhookId}`;
