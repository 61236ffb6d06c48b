/**
 * The two secrets a deployment needs, made the same way for `npm start` and for a deployed edge (`npm run secrets`):
 * the broker link secret (32 random bytes, base64url) and the edge's token signing key (a private ES256 JWK with a
 * dated key id, so a rotated key is told apart in the JWKS). WebCrypto only, like shared/secrets.ts.
 */
import { exportJWK, generateKeyPair } from 'jose';

export function newBrokerSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

export async function newSigningKey(now = new Date()): Promise<string> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = `edge-${now.toISOString().slice(0, 10)}-${newBrokerSecret().slice(0, 6)}`;
  return JSON.stringify({ ...jwk, kid, alg: 'ES256', use: 'sig' });
}
