/**
 * Token checks that do not need a runtime: the lifetime limits (issued in the future, living longer than the maximum)
 * and scope claims as identity providers send them (a space-separated string or an array, in `scope` or `scp`).
 */
import { describe, expect, it } from 'vitest';
import { lifetimeProblem, scopesOf } from '../../workers/auth/tokenClaims.js';

const NOW = Date.UTC(2026, 0, 5, 12, 0, 0);
const s = NOW / 1000;

describe('token lifetime', () => {
  it('accepts a token within the maximum and the clock tolerance', () => {
    expect(lifetimeProblem({ iat: s, exp: s + 3600 }, 3600, 60, NOW)).toBeNull();
    expect(lifetimeProblem({ iat: s + 60, exp: s + 3660 }, 3600, 60, NOW)).toBeNull();
  });
  it('refuses a token issued in the future, past the tolerance', () => {
    expect(lifetimeProblem({ iat: s + 61, exp: s + 600 }, 3600, 60, NOW)).toBe('the access token was issued in the future');
  });
  it('refuses a lifetime above the maximum, measured from iat or, without it, from now', () => {
    expect(lifetimeProblem({ iat: s - 10, exp: s + 3600 }, 3600, 60, NOW)).toMatch(/lives longer than the 3600 s/);
    expect(lifetimeProblem({ exp: s + 3601 }, 3600, 60, NOW)).toMatch(/lives longer/);
    expect(lifetimeProblem({ iat: 'yesterday' as unknown as number, exp: s + 60 }, 3600, 60, NOW)).toMatch(/iat is invalid/);
  });
});

describe('scope claims', () => {
  it('reads a space-separated string, an array, and scp in either form', () => {
    expect(scopesOf({ scope: 'webapi  webapi.write' })).toEqual(['webapi', 'webapi.write']);
    expect(scopesOf({ scope: ['webapi', 'webapi.admin', 7] as unknown as string })).toEqual(['webapi', 'webapi.admin']);
    expect(scopesOf({ scp: ['webapi'] })).toEqual(['webapi']);
    expect(scopesOf({ scp: 'webapi webapi.write' })).toEqual(['webapi', 'webapi.write']);
    expect(scopesOf({ scope: 'webapi', scp: ['webapi.write'] })).toEqual(['webapi', 'webapi.write']);
    expect(scopesOf({})).toEqual([]);
  });
});
