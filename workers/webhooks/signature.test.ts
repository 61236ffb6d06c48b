import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { deliveryHeaders, isWebhookSecret, newWebhookSecret, signDelivery } from './signature.js';

describe('webhook signatures', () => {
  it('makes whsec_ secrets of 24 random bytes, each different', () => {
    const a = newWebhookSecret();
    const b = newWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(isWebhookSecret(a)).toBe(true);
    expect(a).not.toBe(b);
    expect(atob(a.slice(6))).toHaveLength(24);
    expect(isWebhookSecret('whsec_short')).toBe(false);
  });

  it('signs as the standardwebhooks package verifies, with every secret in force', async () => {
    const current = newWebhookSecret();
    const previous = newWebhookSecret();
    const body = JSON.stringify({ type: 'account.created', data: { login: 7, name: 'Zoë "quoted"' } });
    const now = Math.floor(Date.now() / 1000);
    const headers = await deliveryHeaders([current, previous], 'evt_1', now, body);
    expect(headers['webhook-id']).toBe('evt_1');
    expect(headers['webhook-timestamp']).toBe(String(now));
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    // Either secret verifies the delivery: a receiver still on the previous one keeps working during a rotation.
    expect(new Webhook(current).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(previous).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(current).verify(`${body} `, headers)).toThrow();
  });

  it('agrees with the package byte for byte', async () => {
    const secret = newWebhookSecret();
    const at = new Date(1_700_000_000_000);
    expect(await signDelivery(secret, 'evt_x', 1_700_000_000, '{"a":1}')).toBe(
      new Webhook(secret).sign('evt_x', at, '{"a":1}'),
    );
  });
});
