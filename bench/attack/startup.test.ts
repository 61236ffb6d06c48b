/**
 * Attack 0's verdict (bench/attack/startup.ts): what a polled start may answer while it comes up, and the cause a
 * failed start is reported with.
 */
import { describe, expect, it } from 'vitest';
import { startFailureCause, startupHeld } from './startup.js';

describe('a polled start', () => {
  const coming = ['no listener yet', 'no listener yet', '503 RegistryNotReady', '503 down', '200'];

  it('holds with no listener, RegistryNotReady and down on the way, and a token right after the first /healthz 200', () => {
    expect(
      startupHeld({
        healthz: coming,
        token: ['no listener yet', '503 RegistryNotReady', '200'],
        tokenAfterHealthy: '200',
      }),
    ).toBe(true);
  });

  it('does not hold on a 500, another 503, or a token refused after /healthz said 200', () => {
    expect(startupHeld({ healthz: [...coming, '500 server_error'], token: ['200'], tokenAfterHealthy: '200' })).toBe(
      false,
    );
    expect(startupHeld({ healthz: coming, token: ['502'], tokenAfterHealthy: '200' })).toBe(false);
    expect(startupHeld({ healthz: coming, token: ['503 BrokerUnavailable', '200'], tokenAfterHealthy: '200' })).toBe(
      false,
    );
    expect(startupHeld({ healthz: coming, token: ['200'], tokenAfterHealthy: '503 RegistryNotReady' })).toBe(false);
    expect(startupHeld({ healthz: coming, token: ['200'], tokenAfterHealthy: null })).toBe(false);
  });
});

describe('a failed start', () => {
  it('is told by its first two lines that say error or fail, without colours', () => {
    const message =
      '\u001b[31mwrangler\u001b[0m output\nD1_ERROR: no such table\n  at step\nthe broker failed to listen\nError: third';
    expect(startFailureCause(message)).toBe('D1_ERROR: no such table / the broker failed to listen');
  });

  it('is told in at most 300 characters, and in none when no line says why', () => {
    expect(startFailureCause(`Error: ${'x'.repeat(400)}`)).toHaveLength(300);
    expect(startFailureCause('timed out\nafter 60 s')).toBe('');
  });
});
