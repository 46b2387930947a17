// verifyWebhook against deliveries signed by the reference Standard Webhooks library, and by
// Haven's own sender, so the SDK agrees with both.
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { newSigningSecret, signMessage } from '../../../src/modules/webhooks/signing.js';
import { verifyWebhook, WebhookVerificationError } from '../src/webhooks.js';

const secret = `whsec_${randomBytes(24).toString('base64')}`;
const event = { type: 'alert.created', timestamp: '2026-01-15T12:00:00Z', data: { n: 'é' } };
const body = JSON.stringify(event);
const at = new Date('2026-01-15T12:00:00Z');

function delivery(payload = body, signingSecret = secret) {
  return {
    'webhook-id': 'msg_1',
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(signingSecret).sign('msg_1', at, payload),
  };
}

/** verifyWebhook is synchronous (CONTRACT.md §10.2): a refusal is a throw, not a rejection. */
const refuses = (verify: () => unknown, message: RegExp) =>
  expect(verify).toThrow(
    expect.objectContaining({
      name: 'WebhookVerificationError',
      message: expect.stringMatching(message),
    }),
  );

describe('verifyWebhook', () => {
  it('returns the event of a delivery the reference library signed', async () => {
    expect(verifyWebhook(secret, delivery(), body, { now: at })).toEqual(event);
    // The bare base64 secret, and the body as the bytes received.
    const bare = secret.slice('whsec_'.length);
    const bytes = new TextEncoder().encode(body);
    expect(verifyWebhook(bare, delivery(), bytes, { now: at })).toEqual(event);
  });

  it('accepts Headers and plain objects in any case, and repeated signature lines', async () => {
    const headers = delivery();
    expect(verifyWebhook(secret, new Headers(headers), body, { now: at })).toEqual(event);
    const shouted = Object.fromEntries(
      Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]),
    );
    expect(verifyWebhook(secret, shouted, body, { now: at })).toEqual(event);
    const other = new Webhook(`whsec_${randomBytes(24).toString('base64')}`).sign(
      'msg_1',
      at,
      body,
    );
    const lines = { ...headers, 'webhook-signature': [other, headers['webhook-signature']] };
    expect(verifyWebhook(secret, lines, body, { now: at })).toEqual(event);
    const joined = new Headers(headers);
    joined.set('webhook-signature', other);
    joined.append('webhook-signature', headers['webhook-signature']);
    expect(verifyWebhook(secret, joined, body, { now: at })).toEqual(event);
  });

  it('accepts when one of several signatures matches (secret rotation)', async () => {
    const headers = delivery();
    const old = new Webhook(`whsec_${randomBytes(32).toString('base64')}`).sign('msg_1', at, body);
    const list = `v2,abc ${old} v1,not-base64! ${headers['webhook-signature']}`;
    const result = verifyWebhook(secret, { ...headers, 'webhook-signature': list }, body, {
      now: at,
    });
    expect(result).toEqual(event);
  });

  it('refuses a wrong secret and an altered body', async () => {
    const wrong = `whsec_${randomBytes(24).toString('base64')}`;
    refuses(() => verifyWebhook(wrong, delivery(), body, { now: at }), /no matching signature/);
    const altered = body.replace('alert.created', 'alert.deleted');
    refuses(() => verifyWebhook(secret, delivery(), altered, { now: at }), /no matching signature/);
    const alone = { ...delivery(), 'webhook-signature': 'v2,abc v1,' };
    refuses(() => verifyWebhook(secret, alone, body, { now: at }), /no matching signature/);
  });

  it('refuses a timestamp outside the tolerance, either way', async () => {
    const later = (seconds: number) => ({ now: new Date(at.getTime() + seconds * 1000) });
    refuses(() => verifyWebhook(secret, delivery(), body, later(301)), /too old/);
    refuses(() => verifyWebhook(secret, delivery(), body, later(-301)), /too new/);
    expect(verifyWebhook(secret, delivery(), body, later(300))).toEqual(event);
    const wide = { ...later(900), toleranceSeconds: 900 };
    expect(verifyWebhook(secret, delivery(), body, wide)).toEqual(event);
    const garbled = { ...delivery(), 'webhook-timestamp': '17e8' };
    refuses(() => verifyWebhook(secret, garbled, body, { now: at }), /not a number/);
  });

  it('refuses a delivery missing any of the three headers', async () => {
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const) {
      const headers: Record<string, string | undefined> = { ...delivery() };
      headers[name] = undefined;
      refuses(
        () => verifyWebhook(secret, headers, body, { now: at }),
        new RegExp(`missing ${name}`),
      );
    }
  });

  it('refuses a correctly signed body that is not JSON', async () => {
    const text = 'not json';
    refuses(() => verifyWebhook(secret, delivery(text), text, { now: at }), /not JSON/);
  });

  it('verifies what Haven’s webhook sender signs', async () => {
    const havenSecret = newSigningSecret();
    const headers: Record<string, string> = { ...signMessage(havenSecret, 'msg_haven', at, body) };
    expect(verifyWebhook(havenSecret, headers, body, { now: at })).toEqual(event);
  });

  it('throws WebhookVerificationError instances, and TypeError for a broken secret', async () => {
    expect(() => verifyWebhook(secret, {}, body)).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook('whsec_***', delivery(), body, { now: at })).toThrow(TypeError);
  });
});
