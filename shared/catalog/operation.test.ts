/**
 * The shape every catalog entry gets from shared/catalog/operation.ts: the time-out classes and scopes, the scope an
 * entry needs unless it names one, and what defineOperation and defineForFamilies fill in (op, id, flags, scope).
 * defineOperation checks nothing itself: the catalog-wide checks are in shared/catalog/index.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  defineForFamilies,
  defineOperation,
  derivedScope,
  READ_SCOPE,
  SCOPES,
  TIMEOUT_CLASSES,
  TIMEOUT_MAX_S,
  TIMEOUT_MIN_S,
} from './operation.js';
import { FAMILIES, type Family } from '../protocol.js';

describe('time-out classes and scopes', () => {
  it('budgets each time-out class in seconds as the spec does, within 1 .. 300', () => {
    expect(TIMEOUT_CLASSES).toStrictEqual({ read: 10, history: 30, change: 15, trade: 5, maintenance: 60 });
    expect([TIMEOUT_MIN_S, TIMEOUT_MAX_S]).toStrictEqual([1, 300]);
  });

  it('lists the scopes least privilege first, reading being the default', () => {
    expect(SCOPES).toStrictEqual(['webapi', 'webapi.write', 'webapi.admin', 'webapi.audit', 'webapi.webhooks']);
    expect(READ_SCOPE).toBe('webapi');
  });

  it('derives admin for destructive, write for mutating, read otherwise', () => {
    expect(derivedScope({})).toBe('webapi');
    expect(derivedScope({ mutating: false, destructive: false })).toBe('webapi');
    expect(derivedScope({ mutating: true })).toBe('webapi.write');
    expect(derivedScope({ mutating: true, destructive: false })).toBe('webapi.write');
    expect(derivedScope({ destructive: true })).toBe('webapi.admin');
    expect(derivedScope({ mutating: true, destructive: true })).toBe('webapi.admin');
  });

  it('derives write for a password check, which changes nothing but must not be open to a read-only client', () => {
    expect(derivedScope({ passwordCheck: { login: 'login' } })).toBe('webapi.write');
    expect(derivedScope({ mutating: false, destructive: false, passwordCheck: { login: 'login' } })).toBe(
      'webapi.write',
    );
    expect(derivedScope({ destructive: true, passwordCheck: { login: 'login' } })).toBe('webapi.admin');
    expect(derivedScope({ passwordCheck: undefined })).toBe('webapi');
  });
});

const base = {
  name: 'UserThing',
  generation: 'v2',
  family: 'PF4',
  method: 'GET',
  path: '/api/v2/PF4/{tradePlatform}/UserThing',
  tag: 'Users',
  summary: 'Read a thing.',
  response: 'PF4User',
  timeout: 'read',
  read: 'cached',
} as const;

describe('defineOperation', () => {
  it('fills in op and id from family and name, read-only flags and the read scope', () => {
    expect(defineOperation(base)).toStrictEqual({
      ...base,
      op: 'PF4.UserThing',
      id: 'v2.PF4.UserThing',
      mutating: false,
      destructive: false,
      scope: 'webapi',
    });
  });

  it('names a family-less entry Registry in its op and id', () => {
    const entry = defineOperation({ ...base, generation: 'registry', family: null, path: '/api/Things' });
    expect([entry.op, entry.id, entry.family]).toStrictEqual([
      'Registry.UserThing',
      'registry.Registry.UserThing',
      null,
    ]);
  });

  it('keeps an op the entry names', () => {
    const entry = defineOperation({ ...base, family: 'PF5', op: 'Ping' });
    expect([entry.op, entry.id]).toStrictEqual(['Ping', 'v2.PF5.UserThing']);
  });

  it('derives the scope from the flags the entry declares', () => {
    const write = defineOperation({ ...base, method: 'POST', mutating: true });
    expect([write.mutating, write.destructive, write.scope]).toStrictEqual([true, false, 'webapi.write']);
    const check = defineOperation({
      ...base,
      method: 'POST',
      params: z.object({ login: z.number() }),
      passwordCheck: { login: 'login' },
    });
    expect([check.mutating, check.destructive, check.scope, check.passwordCheck]).toStrictEqual([
      false,
      false,
      'webapi.write',
      { login: 'login' },
    ]);
    const admin = defineOperation({ ...base, method: 'DELETE', mutating: true, destructive: true });
    expect([admin.mutating, admin.destructive, admin.scope]).toStrictEqual([true, true, 'webapi.admin']);
  });

  it('keeps a scope the entry names over the derived one', () => {
    expect(defineOperation({ ...base, scope: 'webapi.admin' }).scope).toBe('webapi.admin');
    expect(defineOperation({ ...base, mutating: true, destructive: true, scope: 'webapi.write' }).scope).toBe(
      'webapi.write',
    );
    expect(defineOperation({ ...base, mutating: true, scope: 'webapi' }).scope).toBe('webapi');
  });

  it('passes everything else through unchanged', () => {
    const params = z.object({ login: z.string() });
    const query = z.object({ limit: z.string().optional() });
    const body = z.object({ name: z.string() });
    const answer = { kind: 'live', command: 'UserThingGet' } as const;
    const entry = defineOperation({
      ...base,
      method: 'PATCH',
      params,
      query,
      body,
      answer,
      controlCharacters: { 'body.name': 'lineBreaks' },
      paged: { key: ['login', 'ticket'] },
      bodyLimitBytes: 2048,
      mutating: true,
    });
    expect(entry).toStrictEqual({
      ...base,
      method: 'PATCH',
      params,
      query,
      body,
      answer,
      controlCharacters: { 'body.name': 'lineBreaks' },
      paged: { key: ['login', 'ticket'] },
      bodyLimitBytes: 2048,
      mutating: true,
      destructive: false,
      op: 'PF4.UserThing',
      id: 'v2.PF4.UserThing',
      scope: 'webapi.write',
    });
    expect(entry.params).toBe(params);
    expect(entry.body).toBe(body);
  });
});

describe('defineForFamilies', () => {
  const shared = {
    name: 'Clock',
    generation: 'v2',
    method: 'GET',
    tag: 'Common',
    summary: 'Time.',
    response: { type: 'string' },
    timeout: 'read',
    read: 'live',
    path: (family: Family) => `/api/v2/${family}/{tradePlatform}/Clock`,
  } as const;

  it('declares one entry per family, in order, answered by one family-agnostic handler', () => {
    const [pf4, pf5, ...rest] = defineForFamilies(FAMILIES, shared);
    expect(rest).toStrictEqual([]);
    const { path: _path, ...common } = shared;
    expect(pf4).toStrictEqual({
      ...common,
      family: 'PF4',
      path: '/api/v2/PF4/{tradePlatform}/Clock',
      op: 'Clock',
      id: 'v2.PF4.Clock',
      mutating: false,
      destructive: false,
      scope: 'webapi',
    });
    expect(pf5).toStrictEqual({
      ...common,
      family: 'PF5',
      path: '/api/v2/PF5/{tradePlatform}/Clock',
      op: 'Clock',
      id: 'v2.PF5.Clock',
      mutating: false,
      destructive: false,
      scope: 'webapi',
    });
  });

  it('keeps an op the declaration names, and flags apply to every family', () => {
    const entries = defineForFamilies(['PF5'], { ...shared, op: 'TimeNow', mutating: true });
    expect(entries.map((e) => [e.id, e.op, e.family, e.path, e.scope])).toStrictEqual([
      ['v2.PF5.Clock', 'TimeNow', 'PF5', '/api/v2/PF5/{tradePlatform}/Clock', 'webapi.write'],
    ]);
  });
});
