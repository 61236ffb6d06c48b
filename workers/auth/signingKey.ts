/**
 * The local issuer's ES256 key pair, imported from AUTH_SIGNING_KEY (a private JWK) once per isolate: importing is
 * the slow part of signing and verifying, and the variable does not change while an isolate lives.
 */
import { calculateJwkThumbprint, importJWK, type JWK } from 'jose';

export const ALGORITHM = 'ES256';

export interface LocalKeys {
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  /** The public half as published at /.well-known/jwks.json; built from an allow-list so `d` can never leak. */
  publicJwk: JWK;
}

let cache: { source: string; keys: Promise<LocalKeys> } | undefined;

export function localKeys(source: string): Promise<LocalKeys> {
  if (cache?.source !== source) {
    const keys = importLocalKeys(source);
    cache = { source, keys };
    // A bad variable must not poison the isolate forever: drop the cached failure so a fixed value is retried.
    keys.catch(() => {
      if (cache?.keys === keys) cache = undefined;
    });
  }
  return cache.keys;
}

async function importLocalKeys(source: string): Promise<LocalKeys> {
  let jwk: JWK;
  try {
    jwk = JSON.parse(source) as JWK;
  } catch {
    throw new Error('AUTH_SIGNING_KEY is not JSON');
  }
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || !jwk.x || !jwk.y || !jwk.d) {
    throw new Error('AUTH_SIGNING_KEY must be a private P-256 EC JWK (ES256)');
  }
  const base = { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y };
  const kid = jwk.kid ?? (await calculateJwkThumbprint(base));
  const privateKey = (await importJWK({ ...base, d: jwk.d }, ALGORITHM)) as CryptoKey;
  const publicKey = (await importJWK(base, ALGORITHM)) as CryptoKey;
  return { kid, privateKey, publicKey, publicJwk: { ...base, kid, alg: ALGORITHM, use: 'sig' } };
}
