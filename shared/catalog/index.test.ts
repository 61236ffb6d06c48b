import { describe, expect, it } from 'vitest';
import { catalog, brokerOps, TIMEOUT_CLASSES, login32, login64, groupName, symbolName, pageQuery } from './index.js';
import { openapiComponents } from '../records/contract.js';
import { CON_COMMON_SCHEMAS } from './v1/pf4.js';

const pathParams = (path: string) =>
  [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).filter((p) => p !== 'tradePlatform');

describe('operation catalog', () => {
  it('gives every entry a unique id and a path under its generation and family', () => {
    expect(new Set(catalog.map((e) => e.id)).size).toBe(catalog.length);
    for (const e of catalog) {
      if (e.generation === 'v2') expect(e.path.startsWith(`/api/v2/${e.family}/{tradePlatform}/`)).toBe(true);
      if (e.generation === 'v1') expect(e.path.startsWith(`/api/${e.family}/{tradePlatform}/`)).toBe(true);
      if (e.generation === 'registry') expect(e.path.startsWith('/api/')).toBe(true);
    }
  });

  it('declares a schema for every path parameter, and only defaults for segments a shorter route leaves out', () => {
    for (const e of catalog) {
      const shape = (e.params?.shape ?? {}) as Record<
        string,
        { safeParse(v: unknown): { success: boolean; data?: unknown } }
      >;
      const inPath = pathParams(e.path);
      expect(
        Object.keys(shape)
          .filter((k) => inPath.includes(k))
          .sort(),
        e.id,
      ).toEqual([...inPath].sort());
      for (const extra of Object.keys(shape).filter((k) => !inPath.includes(k))) {
        const absent = shape[extra].safeParse(undefined);
        expect(
          absent.success && absent.data !== undefined,
          `${e.id}: ${extra} is not in the path, so it needs a default`,
        ).toBe(true);
      }
    }
  });

  it('declares exactly the password checks as such, each needing the write scope and naming its login argument', () => {
    const checks = catalog.filter((e) => e.passwordCheck);
    expect(checks.map((e) => e.id).sort()).toStrictEqual([
      'v1.PF4.UserPasswordCheck',
      'v1.PF5.UserPasswordCheck',
      'v2.PF4.UserPasswordCheck',
    ]);
    for (const e of checks) {
      expect([e.mutating, e.scope, e.passwordCheck], e.id).toStrictEqual([false, 'webapi.write', { login: 'login' }]);
      expect(Object.keys(e.params?.shape ?? {}), e.id).toContain('login');
    }
    // No operation that answers whether a guessed password is right stays open to a read-only token.
    const byName = catalog.filter((e) => /Password/.test(e.name));
    for (const e of byName) expect(e.scope, e.id).not.toBe('webapi');
  });

  it('marks every destructive operation mutating and gives it a confirm query', () => {
    for (const e of catalog.filter((x) => x.destructive)) {
      expect(e.mutating, e.id).toBe(true);
      expect(Object.keys(e.query?.shape ?? {}), e.id).toContain('confirm');
    }
  });

  it('pages only lists, with limit and cursor in the query', () => {
    for (const e of catalog.filter((x) => x.paged)) {
      expect(typeof e.response === 'string' && e.response.endsWith('[]'), e.id).toBe(true);
      expect(Object.keys(e.query?.shape ?? {}), e.id).toEqual(expect.arrayContaining(['limit', 'cursor']));
    }
  });

  it('names response schemas that exist in the contract (or registry records)', () => {
    const registry = new Set([
      'TradePlatform',
      'Organization',
      'PingResult',
      'ApiClient',
      'AuditEventPage',
      'WebhookEndpoint',
      'WebhookEndpointWithSecret',
      'WebhookQueued',
      'WebhookAttempt',
      'WebhookDeadLetter',
      ...Object.keys(CON_COMMON_SCHEMAS),
    ]);
    for (const { id, response } of catalog) {
      if (typeof response !== 'string') continue;
      const name = response.replace(/\[\]$/, '');
      expect(name in openapiComponents || registry.has(name), `${id} → ${name}`).toBe(true);
    }
  });

  it('sends to the broker exactly the operations that are not answered locally', () => {
    expect(brokerOps.has('PF4.UserRecordGet')).toBe(true);
    expect(brokerOps.has('PF4.TradesGetTicket')).toBe(true);
    expect(brokerOps.has('Ping')).toBe(true);
    expect(brokerOps.has('Registry.TradePlatforms')).toBe(false);
  });

  it('uses the spec defaults for time-out classes', () => {
    expect(TIMEOUT_CLASSES).toEqual({ read: 10, history: 30, change: 15, trade: 5, maintenance: 60 });
    const srvRestart = catalog.find((e) => e.id === 'v2.PF4.SrvRestart')!;
    expect(TIMEOUT_CLASSES[srvRestart.timeout]).toBe(60);
  });
});

describe('input fields', () => {
  it('accepts positive 32-bit logins and names the rule otherwise', () => {
    expect(login32.parse('100001')).toBe(100001);
    expect(login32.parse('2147483647')).toBe(2147483647);
    for (const bad of ['0', '-1', 'abc', '2147483648', '1.5', '']) {
      const r = login32.safeParse(bad);
      expect(r.success, bad).toBe(false);
      expect(r.error!.issues[0].message).toMatch(/login/);
    }
  });

  it('reads 64-bit logins exactly: numbers up to 2^53 − 1, bigints beyond, up to the int64 maximum', () => {
    expect(login64.parse('9007199254740991')).toBe(9007199254740991);
    expect(login64.parse('9007199254740992')).toBe(9007199254740992n);
    expect(login64.parse('9007199254740993')).toBe(9007199254740993n);
    expect(login64.parse('9223372036854775807')).toBe(9223372036854775807n);
    expect(login64.safeParse('9223372036854775808').error!.issues[0].message).toBe(
      'login must be at most 9223372036854775807',
    );
    expect(login64.safeParse('0').error!.issues[0].message).toBe('login must be at least 1');
  });

  it('limits group names to 16 and symbols to 12 characters', () => {
    expect(groupName.safeParse('a'.repeat(16)).success).toBe(true);
    expect(groupName.safeParse('a'.repeat(17)).error!.issues[0].message).toBe('group must be at most 16 characters');
    expect(symbolName.safeParse('EURUSD').success).toBe(true);
    expect(symbolName.safeParse('ABCDEFGHIJKLM').error!.issues[0].message).toBe('symbol must be at most 12 characters');
  });

  it('bounds the page size to 1..5000', () => {
    expect(pageQuery.limit.parse('5000')).toBe(5000);
    expect(pageQuery.limit.safeParse('5001').error!.issues[0].message).toBe('limit must be at most 5000');
    expect(pageQuery.limit.safeParse('0').error!.issues[0].message).toBe('limit must be at least 1');
    expect(pageQuery.limit.parse(undefined)).toBeUndefined();
  });
});
