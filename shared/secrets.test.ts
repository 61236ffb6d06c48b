/** Client secrets at rest: PBKDF2 with a per-client salt, verified in constant time, never stored in clear. */
import { describe, expect, it } from 'vitest';
import { hashSecret, newClientSecret, PBKDF2_ITERATIONS, timingSafeEqual, verifySecret } from './secrets.js';

describe('client secrets', () => {
  it('verifies the right secret and refuses any other', async () => {
    const stored = await hashSecret('correct horse');
    expect(stored.iterations).toBe(PBKDF2_ITERATIONS);
    expect(await verifySecret('correct horse', stored)).toBe(true);
    expect(await verifySecret('correct hors', stored)).toBe(false);
    expect(await verifySecret('Correct horse', stored)).toBe(false);
    expect(await verifySecret('', stored)).toBe(false);
  });

  it('salts every hash differently and keeps the secret out of it', async () => {
    const a = await hashSecret('same secret', 1000);
    const b = await hashSecret('same secret', 1000);
    expect(a.salt).not.toBe(b.salt);
    expect(a.hash).not.toBe(b.hash);
    expect(Buffer.from(a.salt, 'base64')).toHaveLength(16);
    expect(Buffer.from(a.hash, 'base64')).toHaveLength(32);
    expect(JSON.stringify(a)).not.toContain('same secret');
    expect(await verifySecret('same secret', b)).toBe(true);
    // The iteration count is part of what is stored: verifying with another count fails.
    expect(await verifySecret('same secret', { ...a, iterations: 1001 })).toBe(false);
  });

  it('compares equal-length byte arrays and refuses differing lengths', () => {
    expect(timingSafeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 3]))).toBe(true);
    expect(timingSafeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 4]))).toBe(false);
    expect(timingSafeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2, 3]))).toBe(false);
  });

  it('generates 256-bit base64url client secrets', () => {
    const secrets = new Set(Array.from({ length: 50 }, newClientSecret));
    expect(secrets.size).toBe(50);
    for (const s of secrets) expect(s).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});
