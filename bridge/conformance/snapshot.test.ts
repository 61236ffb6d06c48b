/**
 * The snapshot as the suite reads it, on crafted frames: each departure from begin, chunks, end is named (order,
 * kinds undeclared or out of the documented order, counts, keys), and the cache replays the snapshot and the events
 * as a broker does (an event during the snapshot overwritten by a later chunk, a closed PF4 trade leaving, a symbol
 * taking its summary along).
 */
import { describe, expect, it } from 'vitest';
import type { Received } from './connection.js';
import { analyseSnapshot, Cache } from './snapshot.js';

function frames(...values: unknown[]): Received[] {
  return values.map((value, i) => ({ seq: i + 1, at: i, text: JSON.stringify(value), value, isBinary: false }));
}
const begin = { event: 'resync', op: 'begin', record: { server: 's', family: 'PF4' } };
const chunk = (kind: string, items: unknown[]) => ({ event: 'resync', op: 'chunk', record: { kind, items } });
const end = (counts: Record<string, number>) => ({ event: 'resync', op: 'end', record: { counts } });
const DECLARED = ['users', 'trades', 'ticks', 'symbols', 'symbolInfo'];

describe('analyseSnapshot', () => {
  it('finds nothing wrong in a well-formed snapshot', () => {
    const reading = analyseSnapshot(
      frames(
        begin,
        chunk('users', [{ login: 1 }, { login: 2 }]),
        chunk('trades', [{ order: 5 }]),
        end({ users: 2, trades: 1, ticks: 0 }),
      ),
      'PF4',
      DECLARED,
    );
    expect([reading.orderProblems, reading.kindProblems, reading.countProblems, reading.keyProblems]).toEqual([
      [],
      [],
      [],
      [],
    ]);
    expect([...reading.items.keys()]).toEqual(['users', 'trades']);
  });

  it('names a chunk before begin, an event before begin and a second begin', () => {
    const reading = analyseSnapshot(
      frames(
        { event: 'users', op: 'update', record: { login: 1 } },
        chunk('users', []),
        begin,
        begin,
        end({ users: 0 }),
      ),
      'PF4',
      DECLARED,
    );
    expect(reading.orderProblems).toEqual([
      'a users update event came before resync begin',
      'a resync chunk before begin',
      'a second resync begin before end',
    ]);
  });

  it('names kinds out of the documented order, undeclared, and foreign to the family', () => {
    const reading = analyseSnapshot(
      frames(
        begin,
        chunk('trades', [{ order: 1 }]),
        chunk('users', [{ login: 1 }]),
        chunk('positions', [{ position: 1 }]),
        chunk('groups', [{ group: 'g' }]),
        end({ trades: 1, users: 1, positions: 1, groups: 1 }),
      ),
      'PF4',
      DECLARED,
    );
    expect(reading.kindProblems).toEqual([
      'a users chunk after trades: the documented order is users, trades, ticks, symbols, groups, margin, online, news, symbolGroups, symbolSessions, symbolInfo',
      'a positions chunk, a kind the login did not declare among its events',
      'a positions chunk: PF4 snapshots carry users, trades, ticks, symbols, groups, margin, online, news, symbolGroups, symbolSessions, symbolInfo',
      'a groups chunk, a kind the login did not declare among its events',
    ]);
  });

  it('names counts that disagree with the items, and a count of a kind that sent nothing', () => {
    const reading = analyseSnapshot(
      frames(begin, chunk('users', [{ login: 1 }, { login: 2 }]), end({ users: 3, trades: 4 })),
      'PF4',
      DECLARED,
    );
    expect(reading.countProblems).toEqual([
      'users: end.counts says 3, 2 items came',
      'trades: end.counts says 4, no chunk came',
    ]);
  });

  it('names items without their key, repeated keys and items that are not objects', () => {
    const reading = analyseSnapshot(
      frames(begin, chunk('users', [{ login: 1 }, { name: 'x' }, { login: 1 }, 7]), end({ users: 4 })),
      'PF4',
      DECLARED,
    );
    expect(reading.keyProblems).toEqual([
      'a users item without its key login: {"name":"x"}',
      'users login 1 twice',
      'a users item that is not an object: 7',
    ]);
  });
});

describe('Cache', () => {
  it('replays the snapshot (a later chunk overwriting an event during it) and then the events', () => {
    const connection = {
      frames: frames(
        begin,
        chunk('users', [{ login: 1, name: 'a' }]),
        { event: 'users', op: 'update', record: { login: 2, name: 'during' } },
        chunk('users', [{ login: 2, name: 'chunk' }]),
        chunk('trades', [
          { order: 7, tradeRecordState: 'OpenNormal' },
          { order: 8, tradeRecordState: 'OpenNormal' },
        ]),
        chunk('symbols', [{ symbol: 'EURUSD' }]),
        chunk('symbolInfo', [{ symbol: 'EURUSD', bid: 1 }]),
        end({ users: 2, trades: 2, symbols: 1, symbolInfo: 1 }),
      ),
    };
    const reading = analyseSnapshot(connection.frames, 'PF4', [...DECLARED]);
    const cache = new Cache(connection, 'PF4', reading);
    expect(cache.table('users').get('2')).toEqual({ login: 2, name: 'chunk' });
    connection.frames.push(
      ...frames(
        { event: 'trades', op: 'update', record: { order: 7, tradeRecordState: 'ClosedNormal' } },
        { event: 'trades', op: 'delete', record: { order: 8, tradeRecordState: 'Deleted' } },
        { event: 'symbols', op: 'delete', record: { symbol: 'EURUSD' } },
        { event: 'users', op: 'add', record: { login: 3, name: 'new' } },
        { event: 'mail', op: 'add', record: { subject: 'not kept' } },
      ).map((f, i) => ({ ...f, seq: connection.frames.length + i + 1 })),
    );
    cache.catchUp();
    expect([...cache.table('trades').keys()]).toEqual([]);
    expect([...cache.table('symbols').keys()]).toEqual([]);
    expect([...cache.table('symbolInfo').keys()]).toEqual([]);
    expect([...cache.table('users').keys()]).toEqual(['1', '2', '3']);
  });
});
