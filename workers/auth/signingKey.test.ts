/**
 * The local issuer's key pair from AUTH_SIGNING_KEY: what is accepted, the published public half (never `d`), the key
 * id, and the per-isolate import cache that must not keep a failure.
 */
import { describe, expect, it } from 'vitest';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, jwtVerify, SignJWT, type JWK } from 'jose';
import { ALGORITHM, localKeys } from './signingKey.js';

async function privateJwk(kid?: string): Promise<JWK> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  return kid ? { ...jwk, kid } : jwk;
}

describe('local signing key', () => {
  it('signs ES256 tokens its public key verifies, and publishes only the public half', async () => {
    const jwk = await privateJwk('key-1');
    const keys = await localKeys(JSON.stringify(jwk));
    expect(ALGORITHM).toBe('ES256');
    expect(keys.kid).toBe('key-1');
    expect(keys.publicJwk).toEqual({
      kty: 'EC',
      crv: 'P-256',
      x: jwk.x,
      y: jwk.y,
      kid: 'key-1',
      alg: 'ES256',
      use: 'sig',
    });
    const token = await new SignJWT({ n: 1 }).setProtectedHeader({ alg: 'ES256' }).sign(keys.privateKey);
    expect((await jwtVerify(token, keys.publicKey)).payload.n).toBe(1);
    expect(keys.privateKey.type).toBe('private');
    expect(keys.publicKey.type).toBe('public');
  });

  it('names a key without kid by its RFC 7638 thumbprint', async () => {
    const jwk = await privateJwk();
    const keys = await localKeys(JSON.stringify(jwk));
    expect(keys.kid).toBe(await calculateJwkThumbprint({ kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y }));
    expect(keys.publicJwk.kid).toBe(keys.kid);
  });

  it('imports a key once per value and again when the value changes', async () => {
    const a = JSON.stringify(await privateJwk('a'));
    const b = JSON.stringify(await privateJwk('b'));
    const first = localKeys(a);
    expect(localKeys(a)).toBe(first);
    expect((await localKeys(b)).kid).toBe('b');
    expect((await localKeys(a)).kid).toBe('a');
  });

  it('refuses anything but a private P-256 EC JWK, naming the variable', async () => {
    const jwk = await privateJwk();
    await expect(localKeys('{not json')).rejects.toThrow('AUTH_SIGNING_KEY is not JSON');
    const wrong = 'AUTH_SIGNING_KEY must be a private P-256 EC JWK (ES256)';
    const { d: _d, ...publicOnly } = jwk;
    for (const bad of [
      { ...jwk, kty: 'RSA' },
      { ...jwk, crv: 'P-384' },
      { ...jwk, x: '' },
      { ...jwk, y: undefined },
      publicOnly,
    ]) {
      await expect(localKeys(JSON.stringify(bad))).rejects.toThrow(wrong);
    }
  });

  it('does not keep a failed import: the same value is tried again', async () => {
    const source = '{"kty":"EC"}';
    const failed = localKeys(source);
    await expect(failed).rejects.toThrow();
    const again = localKeys(source);
    expect(again).not.toBe(failed);
    await expect(again).rejects.toThrow();
  });
});
