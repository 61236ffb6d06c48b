/**
 * Token checks that do not need a runtime: the lifetime limits (issued in the future, living longer than the maximum)
 * and scope claims as identity providers send them (a space-separated string or an array, in `scope` or `scp`).
 */
import { describe, expect, it } from 'vitest';
import { lifetimeProblem, scopesOf } from './tokenClaims.js';

const NOW = Date.UTC(2026, 0, 5, 12, 0, 0);
const s = NOW / 1000;

describe('token lifetime', () => {
  it('accepts a token within the maximum and the clock tolerance', () => {
    expect(lifetimeProblem({ iat: s, exp: s + 3600 }, 3600, 60, NOW)).toBeNull();
    expect(lifetimeProblem({ iat: s + 60, exp: s + 3660 }, 3600, 60, NOW)).toBeNull();
  });
  it('refuses a token issued in the future, past the tolerance', () => {
    expect(lifetimeProblem({ iat: s + 61, exp: s + 600 }, 3600, 60, NOW)).toBe(
      'the access token was issued in the future',
    );
  });
  it('refuses a lifetime above the maximum, measured from iat or, without it, from now', () => {
    expect(lifetimeProblem({ iat: s - 10, exp: s + 3600 }, 3600, 60, NOW)).toMatch(/lives longer than the 3600 s/);
    expect(lifetimeProblem({ exp: s + 3601 }, 3600, 60, NOW)).toMatch(/lives longer/);
    expect(lifetimeProblem({ iat: 'yesterday' as unknown as number, exp: s + 60 }, 3600, 60, NOW)).toMatch(
      /iat is invalid/,
    );
  });
});

describe('scope claims', () => {
  it('reads a space-separated string, an array, and scp in either form', () => {
    expect(scopesOf({ scope: 'webapi  webapi.write' })).toEqual(['webapi', 'webapi.write']);
    expect(scopesOf({ scope: ['webapi', 'webapi.admin', 7] as unknown })).toEqual(['webapi', 'webapi.admin']);
    expect(scopesOf({ scp: ['webapi'] })).toEqual(['webapi']);
    expect(scopesOf({ scp: 'webapi webapi.write' })).toEqual(['webapi', 'webapi.write']);
    expect(scopesOf({ scope: 'webapi', scp: ['webapi.write'] })).toEqual(['webapi', 'webapi.write']);
    expect(scopesOf({})).toEqual([]);
  });
});

describe('token lifetime limits at their edges', () => {
  const problem = (payload: Record<string, unknown>, max = 3600, tolerance = 60) =>
    lifetimeProblem(payload, max, tolerance, NOW);

  it('accepts iat up to the tolerance ahead of the clock, to the millisecond, and no further', () => {
    expect(problem({ iat: s + 60 })).toBeNull();
    expect(lifetimeProblem({ iat: s + 60 }, 3600, 60, NOW - 1)).toBe('the access token was issued in the future');
    expect(problem({ iat: s + 1 }, 3600, 0)).toBe('the access token was issued in the future');
    expect(problem({ iat: s }, 3600, 0)).toBeNull();
  });

  it('refuses an iat that is not a finite number, whatever else the token says', () => {
    for (const iat of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, '1767614400', null, {}]) {
      expect(problem({ iat, exp: s + 60 })).toBe('the access token claim iat is invalid');
      expect(problem({ iat })).toBe('the access token claim iat is invalid');
    }
    expect(problem({ exp: s + 60 })).toBeNull();
  });

  it('accepts a lifetime of exactly the maximum and names the maximum when refusing one second more', () => {
    expect(problem({ iat: s - 100, exp: s - 100 + 3600 })).toBeNull();
    expect(problem({ iat: s - 100, exp: s - 100 + 3601 })).toBe(
      'the access token lives longer than the 3600 s this API accepts',
    );
    expect(problem({ iat: s - 100, exp: s - 100 + 901 }, 900)).toBe(
      'the access token lives longer than the 900 s this API accepts',
    );
    // Without iat, what is left from now counts.
    expect(problem({ exp: s + 3600 })).toBeNull();
    expect(problem({ exp: s + 3600.5 })).toMatch(/^the access token lives longer than the 3600 s/);
    // An old iat does not make a long-lived token acceptable: exp - iat counts, not exp - now.
    expect(problem({ iat: s - 7200, exp: s + 60 })).toBe(
      'the access token lives longer than the 3600 s this API accepts',
    );
  });

  it('leaves a token without a numeric exp to the signature check', () => {
    expect(problem({ iat: s - 10 })).toBeNull();
    expect(problem({ iat: s - 10, exp: String(s + 99_999) })).toBeNull();
    expect(problem({})).toBeNull();
  });
});

describe('scope claims as providers send them', () => {
  it('splits on any whitespace and drops empty names', () => {
    expect(scopesOf({ scope: ' webapi\twebapi.write\n\nwebapi.admin ' })).toEqual([
      'webapi',
      'webapi.write',
      'webapi.admin',
    ]);
    expect(scopesOf({ scope: '' })).toEqual([]);
    expect(scopesOf({ scope: '   ' })).toEqual([]);
  });

  it('keeps array entries that are non-empty strings, once, in the order first seen', () => {
    expect(scopesOf({ scp: ['webapi', '', null, 'webapi', 'webapi.write'] as unknown })).toEqual([
      'webapi',
      'webapi.write',
    ]);
    expect(scopesOf({ scope: 'webapi.write webapi', scp: ['webapi', 'webapi.admin'] })).toEqual([
      'webapi.write',
      'webapi',
      'webapi.admin',
    ]);
    expect(scopesOf({ scp: [] })).toEqual([]);
  });

  it('ignores scope claims of other types', () => {
    expect(scopesOf({ scope: 7, scp: { webapi: true } })).toEqual([]);
    expect(scopesOf({ scope: 7, scp: 'webapi' })).toEqual(['webapi']);
  });
});
