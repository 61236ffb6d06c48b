import { describe, expect, it } from 'vitest';
import { brokerOps, catalog } from '../../shared/catalog/index.js';
import { eventKindOf } from '../cache/pumpCache.js';
import { CUSTOM_HANDLER_COMMANDS } from './custom/commands.js';
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

  it("records each operation under its entry's answer kind, a custom one with what its list says it needs", () => {
    for (const entry of catalog.filter((e) => e.read !== 'local')) {
      const registered = handlers.get(entry.op)!;
      expect(registered.kind, entry.id).toBe(entry.answer!.kind);
      if (entry.answer!.kind === 'custom') {
        expect(customHandlers.has(entry.op), entry.id).toBe(true);
        const listed = CUSTOM_HANDLER_COMMANDS[entry.op];
        expect(registered.needs.commands, entry.id).toStrictEqual([...new Set(listed.commands ?? [])]);
        expect(registered.needs.events.length, entry.id).toBe(new Set((listed.cache ?? []).map(eventKindOf)).size);
      }
    }
  });

  it('needs what each answer kind sends and the event kinds that fill the tables it reads', () => {
    expect(handlers.get('PF4.TradeTransaction')!.needs).toStrictEqual({
      commands: ['TradeRecordRequest', 'TradeTransaction'],
      events: [],
    });
    expect(handlers.get('PF4.UserRecordUpdate')!.needs).toStrictEqual({
      commands: ['UserRecordRequest', 'UserRecordUpdate'],
      events: [],
    });
    expect(handlers.get('PF4.UserRecordGet')!.needs).toStrictEqual({ commands: [], events: ['users'] });
    expect(handlers.get('PF4.NewsBodyGet')!.needs).toStrictEqual({ commands: [], events: ['news', 'newsBodies'] });
    expect(handlers.get('PF5.PositionGetBySymbol')!.needs).toStrictEqual({
      commands: [],
      events: ['positions', 'users'],
    });
    expect(handlers.get('Ping')!.needs).toStrictEqual({ commands: ['Ping'], events: [] });
  });

  it('marks the password checks of both families, and no other handler, with the argument naming the login', () => {
    const marked = [...handlers].filter(([, h]) => h.passwordCheck).map(([op, h]) => [op, h.passwordCheck]);
    expect(marked.sort()).toStrictEqual([
      ['PF4.UserPasswordCheck', { login: 'login' }],
      ['PF5.UserPasswordCheck', { login: 'login' }],
    ]);
  });

  it('declares ServerTime once and answers it on both families', () => {
    const serverTimes = catalog.filter((e) => e.name === 'ServerTime' && e.generation === 'v2');
    expect(serverTimes.map((e) => e.family).sort()).toEqual(['PF4', 'PF5']);
    expect(new Set(serverTimes.map((e) => e.op))).toEqual(new Set(['ServerTime']));
  });
});
