/**
 * Client secrets at rest: PBKDF2-SHA256 with a per-client random salt, compared in constant time. WebCrypto only, so
 * the edge (workerd) and the registry CLI (Node) hash the same way. 100,000 iterations is the most workerd allows.
 */
export const PBKDF2_ITERATIONS = 100_000;

export interface SecretHash {
  hash: string;
  salt: string;
  iterations: number;
}

const toB64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const fromB64 = (text: string): Uint8Array<ArrayBuffer> => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

async function derive(secret: string, salt: Uint8Array<ArrayBuffer>, iterations: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(secret), 'PBKDF2', false, ['deriveBits']);
  const bits = await crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt, iterations }, key, 256);
  return new Uint8Array(bits);
}

export async function hashSecret(secret: string, iterations = PBKDF2_ITERATIONS): Promise<SecretHash> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  return { hash: toB64(await derive(secret, salt, iterations)), salt: toB64(salt), iterations };
}

/** Constant-time comparison of two equal-length byte arrays; lengths differing is not secret. */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

export async function verifySecret(secret: string, stored: SecretHash): Promise<boolean> {
  const expected = fromB64(stored.hash);
  const actual = await derive(secret, fromB64(stored.salt), stored.iterations);
  return timingSafeEqual(actual, expected);
}

/** A new random secret for an API client: 32 bytes, base64url. */
export function newClientSecret(): string {
  return toB64(crypto.getRandomValues(new Uint8Array(32)))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}
