import { describe, expect, it } from 'vitest';
import { symbols } from '../../../shared/catalog/v2/pf4/index.js';
import { PumpCache } from '../../cache/pumpCache.js';
import { BAD_CURSOR, encodeCursor } from '../paging.js';
import { pf4SymbolsBindings } from './pf4Symbols.js';
import {
  cacheOf,
  call,
  change,
  expectOperationError,
  platformOf,
  resync,
} from '../../../test/support/broker/handlers.js';

/** A PF4SymbolInfo as the contract has it (every field given, so the cached row is this). */
const info = (symbol: string, bid = 1) => ({
  symbol,
  digits: 5,
  type: 0,
  point: 0.00001,
  spread: 2,
  direction: 'None',
  bid,
  ask: bid + 0.0002,
  high: bid,
  low: bid,
  lastTime: null,
});

/** Names chosen so that ordinal order (upper case first) differs from a locale order. */
const NAMES = ['eurgbp', 'GBPUSD', 'AUDUSD', 'EURUSD'];
const ORDINAL = ['AUDUSD', 'EURUSD', 'GBPUSD', 'eurgbp'];

const loaded = (names = NAMES) => cacheOf('PF4', { symbolInfo: names.map((n) => info(n)) });

const updated = (cache: PumpCache, args: Record<string, unknown> = {}) =>
  call(pf4SymbolsBindings, symbols.SymbolInfoUpdated, platformOf(cache.family, { cache }), args);

const groups = (cache: PumpCache) =>
  call(pf4SymbolsBindings, symbols.SymbolsGroupsGet, platformOf(cache.family, { cache }));

const END = { nextCursor: null, hasMore: false };
const more = (flush: number, symbol: string) => ({ nextCursor: encodeCursor([flush, symbol]), hasMore: true });

/** A cache handing the updated names over in reverse order: the handler must sort them itself. */
class ReversedTakeCache extends PumpCache {
  override takeUpdatedSymbols(): string[] {
    return super.takeUpdatedSymbols().reverse();
  }
}

describe('SymbolInfoUpdated', () => {
  it('flushes: answers every symbol updated since, in ordinal order, and starts a new set', () => {
    const cache = loaded();
    expect(updated(cache)).toEqual({ data: ORDINAL.map((n) => info(n)), paging: END });
    expect(updated(cache)).toEqual({ data: [], paging: END });
    change(cache, 'symbolInfo', 'update', info('GBPUSD', 1.5));
    change(cache, 'symbolInfo', 'update', info('AUDUSD', 0.7));
    expect(updated(cache)).toEqual({ data: [info('AUDUSD', 0.7), info('GBPUSD', 1.5)], paging: END });
  });

  it('sorts the taken names itself, ordinally', () => {
    const cache = new ReversedTakeCache('PF4', { clock: () => 0 });
    resync(cache, { symbolInfo: NAMES.map((n) => info(n)) });
    expect(updated(cache, { limit: 3 })).toEqual({
      data: ORDINAL.slice(0, 3).map((n) => info(n)),
      paging: more(1, 'GBPUSD'),
    });
    expect(updated(cache, { limit: 3, cursor: encodeCursor([1, 'GBPUSD']) })).toEqual({
      data: [info('eurgbp')],
      paging: END,
    });
  });

  it('pages one taken set: later changes wait for the next flush', () => {
    const cache = loaded();
    expect(updated(cache, { limit: 2 })).toEqual({ data: [info('AUDUSD'), info('EURUSD')], paging: more(1, 'EURUSD') });
    change(cache, 'symbolInfo', 'update', info('USDJPY', 150));
    change(cache, 'symbolInfo', 'update', info('GBPUSD', 1.3));
    expect(updated(cache, { limit: 2, cursor: encodeCursor([1, 'EURUSD']) })).toEqual({
      data: [info('GBPUSD', 1.3), info('eurgbp')],
      paging: END,
    });
    expect(updated(cache, { limit: 2 })).toEqual({ data: [info('GBPUSD', 1.3), info('USDJPY', 150)], paging: END });
  });

  it('numbers the flushes in its cursors, per cache', () => {
    const a = loaded();
    const b = loaded(['XAUUSD', 'XAGUSD']);
    expect(updated(a, { limit: 1 })).toEqual({ data: [info('AUDUSD')], paging: more(1, 'AUDUSD') });
    change(a, 'symbolInfo', 'update', info('EURUSD'));
    change(a, 'symbolInfo', 'update', info('AUDUSD', 2));
    expect(updated(a, { limit: 1 })).toEqual({ data: [info('AUDUSD', 2)], paging: more(2, 'AUDUSD') });
    expect(updated(b, { limit: 1 })).toEqual({ data: [info('XAGUSD')], paging: more(1, 'XAGUSD') });
    expect(updated(a, { limit: 1, cursor: encodeCursor([2, 'AUDUSD']) })).toEqual({
      data: [info('EURUSD')],
      paging: END,
    });
  });

  it('answers no next cursor when the last page is exactly full', () => {
    const cache = loaded(['B', 'A']);
    expect(updated(cache, { limit: 2 })).toEqual({ data: [info('A'), info('B')], paging: END });
  });

  it("continues after the cursor's symbol by ordinal order, also when that symbol has left", () => {
    const cache = loaded();
    expect(updated(cache, { limit: 1 })).toEqual({ data: [info('AUDUSD')], paging: more(1, 'AUDUSD') });
    change(cache, 'symbols', 'delete', { symbol: 'EURUSD' });
    expect(updated(cache, { limit: 1, cursor: encodeCursor([1, 'AUDUSD']) })).toEqual({
      data: [info('GBPUSD')],
      paging: more(1, 'GBPUSD'),
    });
    expect(updated(cache, { cursor: encodeCursor([1, 'EURUSD']) })).toEqual({
      data: [info('GBPUSD'), info('eurgbp')],
      paging: END,
    });
    expect(updated(cache, { cursor: encodeCursor([1, 'GBPUSD']) })).toEqual({ data: [info('eurgbp')], paging: END });
    expect(updated(cache, { cursor: encodeCursor([1, 'Z']) })).toEqual({ data: [info('eurgbp')], paging: END });
    expect(updated(cache, { cursor: encodeCursor([1, 'eurgbp']) })).toEqual({ data: [], paging: END });
    expect(updated(cache, { limit: 5, cursor: encodeCursor([1, '~']) })).toEqual({ data: [], paging: END });
  });

  it('refuses a cursor of an earlier flush, or of a flush this cache never had', async () => {
    const message = `${BAD_CURSOR}: it belongs to an earlier flush; call without a cursor to take the symbols updated since`;
    const cache = loaded();
    await updated(cache, { limit: 1 });
    await updated(cache, { limit: 1 });
    await expectOperationError(() => updated(cache, { cursor: encodeCursor([1, 'AUDUSD']) }), {
      code: 'Validation',
      message,
    });
    await expectOperationError(() => updated(cache, { cursor: encodeCursor([3, 'AUDUSD']) }), {
      code: 'Validation',
      message,
    });
    await expectOperationError(() => updated(loaded(), { cursor: encodeCursor([1, 'AUDUSD']) }), {
      code: 'Validation',
      message,
    });
  });

  it('refuses a cursor that is not a flush and a symbol, before reading the cache', async () => {
    const unready = new PumpCache('PF4', { clock: () => 0 });
    for (const key of ['AUDUSD', [1], [1, 'A', 'B'], [1.5, 'A'], ['1', 'A'], [1, 2], [1, null], { 0: 1, 1: 'A' }]) {
      await expectOperationError(() => updated(unready, { cursor: encodeCursor(key) }), {
        code: 'Validation',
        message: BAD_CURSOR,
      });
    }
    await expectOperationError(() => updated(unready, { cursor: 'not a cursor' }), {
      code: 'Validation',
      message: BAD_CURSOR,
    });
  });

  it('waits for the first snapshot', async () => {
    const cache = new PumpCache('PF4', { clock: () => 0 });
    const pending = updated(cache);
    expect(pending).toBeInstanceOf(Promise);
    resync(cache, { symbolInfo: [info('B'), info('A')] });
    expect(await pending).toEqual({ data: [info('A'), info('B')], paging: END });
  });

  it('is an Internal error on a cache without a symbolInfo table', async () => {
    await expectOperationError(() => updated(cacheOf('PF5')), {
      code: 'Internal',
      message: 'the cache keeps no symbolInfo table',
    });
  });
});

describe('SymbolsGroupsGet', () => {
  it('answers the slots in slot order, each as name and description only', () => {
    const cache = cacheOf('PF4', {
      symbolGroups: [
        { pos: 2, name: 'Metals', description: 'Gold and silver', extra: 1 },
        { pos: 0, name: 'Forex', description: 'Majors' },
        { pos: 10, name: 'Indices' },
        { pos: 1 },
      ],
    });
    expect(groups(cache)).toEqual({
      data: [
        { name: 'Forex', description: 'Majors' },
        { name: null, description: null },
        { name: 'Metals', description: 'Gold and silver' },
        { name: 'Indices', description: null },
      ],
    });
    expect(Object.keys((groups(cache) as { data: object[] }).data[2])).toEqual(['name', 'description']);
  });

  it('answers no slots from an empty table', () => {
    expect(groups(cacheOf('PF4'))).toEqual({ data: [] });
  });

  it('is an Internal error on a cache without a symbolGroups table', async () => {
    await expectOperationError(() => groups(cacheOf('PF5')), {
      code: 'Internal',
      message: 'the cache keeps no symbolGroups table',
    });
  });
});
