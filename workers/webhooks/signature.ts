/**
 * Webhook signatures as the Standard Webhooks specification defines them: an endpoint's secret is `whsec_` and the
 * base64 of 24 random bytes; a delivery carries `webhook-id`, `webhook-timestamp` (Unix seconds) and
 * `webhook-signature`, a space-separated list of `v1,<base64 of HMAC-SHA256(key, "<id>.<timestamp>.<body>")>`, one per
 * secret in force (the current one, and during a rotation's grace period the previous one too).
 */

const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 24;

const toB64 = (bytes: Uint8Array) => {
  let text = '';
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text);
};

/** A new endpoint secret: `whsec_` and 24 random bytes in base64. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + toB64(crypto.getRandomValues(new Uint8Array(SECRET_BYTES)));
}

/** Whether `secret` has the shape `newWebhookSecret` gives (what the registry accepts back from its own store). */
export function isWebhookSecret(secret: string): boolean {
  return /^whsec_[A-Za-z0-9+/]{32}$/.test(secret);
}

function keyBytes(secret: string): Uint8Array<ArrayBuffer> {
  const text = atob(secret.slice(SECRET_PREFIX.length));
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

/** One `v1,<base64>` signature of a delivery under `secret`. */
export async function signDelivery(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: string,
): Promise<string> {
  const key = await crypto.subtle.importKey('raw', keyBytes(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  const mac = await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`${id}.${timestampSeconds}.${body}`));
  return `v1,${toB64(new Uint8Array(mac))}`;
}

/** The three Standard Webhooks headers of one delivery, signed with every secret given (current first). */
export async function deliveryHeaders(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): Promise<Record<string, string>> {
  const signatures = await Promise.all(secrets.map((secret) => signDelivery(secret, id, timestampSeconds, body)));
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': signatures.join(' '),
  };
}
