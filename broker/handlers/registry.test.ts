import { describe, expect, it } from 'vitest';
import { brokerOps, catalog } from '../../shared/catalog/index.js';
import { customHandlers } from './custom/index.js';
import { handlers } from './registry.js';

describe('handler registry', () => {
  it('has a handler for every operation the catalog sends to the broker', () => {
    const missing = [...brokerOps].filter((op) => !handlers.has(op));
    expect(missing).toEqual([]);
  });

  it('serves nothing the catalog does not route, so no handler is dead code', () => {
    expect([...handlers.keys()].filter((op) => !brokerOps.has(op))).toEqual([]);
  });

  it('binds each family handler to the family of its catalog entries, and family-agnostic ones to none', () => {
    for (const entry of catalog.filter((e) => e.read !== 'local')) {
      const family = handlers.get(entry.op)!.family;
      if (family === null) expect(entry.op, entry.id).not.toMatch(/^PF[45]\./);
      else expect(family, entry.id).toBe(entry.family);
    }
  });

  it('uses a hand-written handler exactly for the entries that declare a custom answer', () => {
    for (const entry of catalog.filter((e) => e.read !== 'local')) {
      expect(handlers.get(entry.op)!.kind === 'custom', entry.id).toBe(entry.answer?.kind === 'custom');
    }
  });

  it('records each operation under its entry\'s answer kind, a custom one with its hand-written handler', () => {
    for (const entry of catalog.filter((e) => e.read !== 'local')) {
      const registered = handlers.get(entry.op)!;
      expect(registered.kind, entry.id).toBe(entry.answer!.kind);
      if (entry.answer!.kind === 'custom') expect(registered.run, entry.id).toBe(customHandlers.get(entry.op));
    }
  });

  it('marks the password checks of both families, and no other handler, with the argument naming the login', () => {
    const marked = [...handlers].filter(([, h]) => h.passwordCheck).map(([op, h]) => [op, h.passwordCheck]);
    expect(marked.sort()).toStrictEqual([['PF4.UserPasswordCheck', { login: 'login' }], ['PF5.UserPasswordCheck', { login: 'login' }]]);
  });

  it('declares ServerTime once and answers it on both families', () => {
    const serverTimes = catalog.filter((e) => e.name === 'ServerTime' && e.generation === 'v2');
    expect(serverTimes.map((e) => e.family).sort()).toEqual(['PF4', 'PF5']);
    expect(new Set(serverTimes.map((e) => e.op))).toEqual(new Set(['ServerTime']));
  });
});
