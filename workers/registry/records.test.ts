/**
 * The registry's identifier rules and client scope names, as the CLI accepts them and the edge later looks them up,
 * and the admin record of a platform with its brokers.
 */
import { describe, expect, it } from 'vitest';
import { clientIdSchema, isUuid } from './ids.js';
import { adminPlatform, clientScopes, TRADE_PLATFORM_TYPES, type TradePlatform } from './records.js';

describe('registry identifiers', () => {
  it('accept uuids in either case and nothing else', () => {
    expect(isUuid('3f2c8a4e-9b1d-4c6e-8a7f-1d2e3f4a5b6c')).toBe(true);
    expect(isUuid('3F2C8A4E-9B1D-4C6E-8A7F-1D2E3F4A5B6C')).toBe(true);
    for (const bad of [
      '3f2c8a4e9b1d4c6e8a7f1d2e3f4a5b6c',
      '3f2c8a4e-9b1d-4c6e-8a7f-1d2e3f4a5b6',
      ' 3f2c8a4e-9b1d-4c6e-8a7f-1d2e3f4a5b6c',
      '',
      null,
      42,
    ]) {
      expect(isUuid(bad)).toBe(false);
    }
  });

  it('accept client ids of 1 to 128 unreserved characters', () => {
    expect(clientIdSchema.safeParse('a').success).toBe(true);
    expect(clientIdSchema.safeParse('Client_1.2~x-y').success).toBe(true);
    expect(clientIdSchema.safeParse('x'.repeat(128)).success).toBe(true);
    for (const bad of ['', 'x'.repeat(129), 'a:b', 'a b', 'a/b', 'a%20', 'é']) {
      const r = clientIdSchema.safeParse(bad);
      expect(r.success, bad).toBe(false);
      expect(r.error!.issues[0].message).toBe('client id must be 1-128 characters of A-Z a-z 0-9 . _ ~ -');
    }
  });
});

describe('client scopes', () => {
  it('take names separated by spaces or commas, or a list, always with webapi, in SCOPES order', () => {
    expect(clientScopes('')).toEqual({ ok: true, scopes: ['webapi'] });
    expect(clientScopes([])).toEqual({ ok: true, scopes: ['webapi'] });
    expect(clientScopes('webapi.admin, webapi.write')).toEqual({
      ok: true,
      scopes: ['webapi', 'webapi.write', 'webapi.admin'],
    });
    expect(clientScopes(' webapi.write,,webapi.write\twebapi ')).toEqual({
      ok: true,
      scopes: ['webapi', 'webapi.write'],
    });
    expect(clientScopes([' webapi.admin ', ''])).toEqual({ ok: true, scopes: ['webapi', 'webapi.admin'] });
  });

  it('refuse unknown names, naming each and the known ones', () => {
    expect(clientScopes('webapi.root webapi.write all')).toEqual({
      ok: false,
      message:
        'unknown scope webapi.root, all: the scopes are webapi, webapi.write, webapi.admin, webapi.audit, webapi.webhooks',
    });
    expect(clientScopes(['WEBAPI'])).toEqual({
      ok: false,
      message: 'unknown scope WEBAPI: the scopes are webapi, webapi.write, webapi.admin, webapi.audit, webapi.webhooks',
    });
  });

  it('know the three platform types', () => {
    expect(TRADE_PLATFORM_TYPES).toEqual(['PF4', 'PF5', 'PFOther']);
  });
});

describe('the admin record of a platform', () => {
  const organization = { id: '0a000000-0000-4000-8000-00000000000a', name: 'Org', created: '2026-01-01T00:00:00.000Z' };
  const platform: TradePlatform = {
    id: 'c0000000-0000-4000-8000-0000000000c0',
    name: 'P',
    type: 'PF4',
    organizationId: organization.id,
    organization,
    created: organization.created,
  };

  it('carries the brokers in order, and the first alone as the deprecated brokerUrl', () => {
    const unplaced = { homeRegion: null, jurisdiction: null };
    expect(
      adminPlatform({ platform, brokerUrls: ['http://127.0.0.1:2', 'http://127.0.0.1:1'], ...unplaced }),
    ).toStrictEqual({
      ...platform,
      brokerUrls: ['http://127.0.0.1:2', 'http://127.0.0.1:1'],
      brokerUrl: 'http://127.0.0.1:2',
      ...unplaced,
    });
    expect(adminPlatform({ platform, brokerUrls: null, ...unplaced })).toStrictEqual({
      ...platform,
      brokerUrls: null,
      brokerUrl: null,
      ...unplaced,
    });
  });

  it('carries the home region and the jurisdiction the registry names', () => {
    expect(adminPlatform({ platform, brokerUrls: null, homeRegion: 'apac', jurisdiction: null })).toMatchObject({
      homeRegion: 'apac',
      jurisdiction: null,
    });
    expect(adminPlatform({ platform, brokerUrls: null, homeRegion: null, jurisdiction: 'eu' })).toMatchObject({
      homeRegion: null,
      jurisdiction: 'eu',
    });
  });
});
