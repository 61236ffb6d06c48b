/**
 * How the edge reads its authentication variables: local issuer or external identity provider, the audience, the
 * issuer's spelling, the token lifetime and its ceiling, the clock tolerance, each with its default and what an unusable
 * value falls back to.
 */
import { describe, expect, it } from 'vitest';
import {
  authConfig,
  DEFAULT_CLOCK_TOLERANCE_SECONDS,
  DEFAULT_MAX_LIFETIME_SECONDS,
  DEFAULT_TTL_SECONDS,
  REALM,
  SCOPE,
} from './authConfig.js';
import type { Env } from '../env.js';

const config = (vars: Partial<Env>) => authConfig(vars as Env);

describe('auth configuration', () => {
  it('defaults to the local issuer on 127.0.0.1:8787 with the webapi audience, one-hour tokens, a one-day ceiling and 5 s of clock tolerance', () => {
    expect(config({})).toEqual({
      mode: 'local',
      issuer: 'http://127.0.0.1:8787',
      audience: 'webapi',
      ttlSeconds: 3600,
      maxLifetimeSeconds: 86_400,
      clockToleranceSeconds: 5,
      orgClaim: 'org',
      signingKey: undefined,
    });
    expect([SCOPE, REALM, DEFAULT_TTL_SECONDS, DEFAULT_MAX_LIFETIME_SECONDS, DEFAULT_CLOCK_TOLERANCE_SECONDS]).toEqual([
      'webapi',
      'webapi',
      3600,
      86_400,
      5,
    ]);
  });

  it('takes TOKEN_CLOCK_TOLERANCE_SECONDS from 0 to 300 seconds, else 5, in either mode', () => {
    for (const [raw, seconds] of [
      ['0', 0],
      ['30', 30],
      ['300', 300],
      [' 2 ', 2],
    ] as const)
      expect(config({ TOKEN_CLOCK_TOLERANCE_SECONDS: raw }).clockToleranceSeconds).toBe(seconds);
    for (const bad of ['-1', '301', '1.5', 'a minute', ''])
      expect(config({ TOKEN_CLOCK_TOLERANCE_SECONDS: bad }).clockToleranceSeconds).toBe(5);
    expect(
      config({ AUTH_ISSUER: 'https://idp', AUTH_JWKS_URL: 'https://idp/keys', TOKEN_CLOCK_TOLERANCE_SECONDS: '10' }),
    ).toMatchObject({ mode: 'external', clockToleranceSeconds: 10 });
  });

  it('issues as PUBLIC_URL without its trailing slashes, for the configured audience and key', () => {
    const local = config({
      PUBLIC_URL: 'https://gw.example.com/base//',
      AUTH_AUDIENCE: 'gateway',
      AUTH_SIGNING_KEY: '{"kty":"EC"}',
    });
    expect(local).toMatchObject({
      mode: 'local',
      issuer: 'https://gw.example.com/base',
      audience: 'gateway',
      signingKey: '{"kty":"EC"}',
    });
    expect(config({ PUBLIC_URL: 'https://gw.example.com/' }).issuer).toBe('https://gw.example.com');
    expect(config({ PUBLIC_URL: 'https://gw.example.com' }).issuer).toBe('https://gw.example.com');
    // An empty variable is unset.
    expect(config({ PUBLIC_URL: '', AUTH_AUDIENCE: '' })).toMatchObject({
      issuer: 'http://127.0.0.1:8787',
      audience: 'webapi',
    });
  });

  it('takes TOKEN_TTL_SECONDS when it is a positive integer, and never above the lifetime ceiling', () => {
    expect(config({ TOKEN_TTL_SECONDS: '900' })).toMatchObject({ ttlSeconds: 900 });
    expect(config({ TOKEN_TTL_SECONDS: '1' })).toMatchObject({ ttlSeconds: 1 });
    for (const bad of ['0', '-60', '1.5', 'soon', ''])
      expect(config({ TOKEN_TTL_SECONDS: bad })).toMatchObject({ ttlSeconds: 3600 });
    expect(config({ TOKEN_TTL_SECONDS: '7200', TOKEN_MAX_LIFETIME_SECONDS: '1800' })).toMatchObject({
      ttlSeconds: 1800,
      maxLifetimeSeconds: 1800,
    });
    expect(config({ TOKEN_MAX_LIFETIME_SECONDS: '600' })).toMatchObject({ ttlSeconds: 600, maxLifetimeSeconds: 600 });
    expect(config({ TOKEN_TTL_SECONDS: '86401' })).toMatchObject({ ttlSeconds: 86_400 });
  });

  it('takes TOKEN_MAX_LIFETIME_SECONDS when it is a positive integer, else one day', () => {
    expect(config({ TOKEN_MAX_LIFETIME_SECONDS: '1' }).maxLifetimeSeconds).toBe(1);
    expect(config({ TOKEN_MAX_LIFETIME_SECONDS: '172800' }).maxLifetimeSeconds).toBe(172_800);
    for (const bad of ['0', '-1', '2.5', 'a day', ''])
      expect(config({ TOKEN_MAX_LIFETIME_SECONDS: bad }).maxLifetimeSeconds).toBe(86_400);
  });

  it('verifies against an external identity provider only when both AUTH_ISSUER and AUTH_JWKS_URL are set', () => {
    const external = config({
      AUTH_ISSUER: 'https://idp.example.com/',
      AUTH_JWKS_URL: 'https://idp.example.com/keys',
      AUTH_AUDIENCE: 'api://gw',
      TOKEN_MAX_LIFETIME_SECONDS: '7200',
      PUBLIC_URL: 'https://gw.example.com',
      AUTH_SIGNING_KEY: 'unused',
    });
    // The provider's issuer is kept byte for byte (a trailing slash is part of some providers' issuer).
    expect(external).toEqual({
      mode: 'external',
      issuer: 'https://idp.example.com/',
      audience: 'api://gw',
      jwksUrl: 'https://idp.example.com/keys',
      jwksTimeoutMs: 5000,
      maxLifetimeSeconds: 7200,
      clockToleranceSeconds: 5,
      orgClaim: 'org',
    });
    expect(
      config({ AUTH_ISSUER: 'https://idp', AUTH_JWKS_URL: 'https://idp/keys', AUTH_ORG_CLAIM: 'tenant' }),
    ).toMatchObject({ mode: 'external', orgClaim: 'tenant', audience: 'webapi', maxLifetimeSeconds: 86_400 });
    expect(
      config({ AUTH_ISSUER: 'https://idp', AUTH_JWKS_URL: 'https://idp/keys', AUTH_JWKS_TIMEOUT_MS: '250' }),
    ).toMatchObject({ mode: 'external', jwksTimeoutMs: 250 });
    expect(config({ AUTH_ISSUER: 'https://idp' }).mode).toBe('local');
    expect(config({ AUTH_JWKS_URL: 'https://idp/keys' }).mode).toBe('local');
    expect(config({ AUTH_ISSUER: 'https://idp', AUTH_JWKS_URL: '' }).mode).toBe('local');
  });
});
