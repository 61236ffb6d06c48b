/**
 * PF4 symbol reads with logic of their own: the summaries of the symbols updated since the last flush (paged over a
 * taken set) and the security groups without their slot numbers.
 */
import { symbols } from '../../../shared/catalog/v2/pf4/index.js';
import { OperationError } from '../../../shared/errors.js';
import { shapeRecord } from '../../../shared/records/shape.js';
import type { PumpCache, Row } from '../../cache/pumpCache.js';
import { fromCache } from '../handler.js';
import { BAD_CURSOR, pageOf, pageRequest, pagingMeta } from '../paging.js';
import { bind } from './bind.js';

/**
 * The set a flush of `SymbolInfoUpdated` took, kept per platform (per cache) until the next flush so that the pages
 * of one flush are cut from one fixed, sorted list. `flush` numbers the flushes; cursors carry it.
 */
interface TakenSet {
  flush: number;
  names: string[];
}

const taken = new WeakMap<PumpCache, TakenSet>();

/** Cursor key of `SymbolInfoUpdated`: the flush it belongs to and the last symbol answered. */
type UpdatedCursor = [flush: number, symbol: string];
const isUpdatedCursor = (v: unknown): v is UpdatedCursor =>
  Array.isArray(v) && v.length === 2 && Number.isSafeInteger(v[0]) && typeof v[1] === 'string';

const ordinal = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function table(cache: PumpCache, kind: string) {
  const t = cache.table(kind);
  if (!t) throw new OperationError('Internal', `the cache keeps no ${kind} table`);
  return t;
}

const shapeGroup = shapeRecord('PF4SymbolGroup');

export const pf4SymbolsBindings = [
  /**
   * Without a cursor: a flush. The cache's changed set is taken (a new one starts) and its first page answered. With a
   * cursor: the next page of the set that flush took. A cursor from before the latest flush is refused: its set is
   * gone, and continuing over the new one would skip or repeat symbols.
   */
  bind(symbols.SymbolInfoUpdated, (ctx) => {
    const page = pageRequest<UpdatedCursor>(ctx.args, isUpdatedCursor);
    return fromCache(ctx, () => {
      const cache = ctx.platform.cache;
      let set = taken.get(cache);
      if (page.after === undefined) {
        set = { flush: (set?.flush ?? 0) + 1, names: [...cache.takeUpdatedSymbols()].sort(ordinal) };
        taken.set(cache, set);
      } else if (!set || set.flush !== page.after[0]) {
        throw new OperationError(
          'Validation',
          `${BAD_CURSOR}: it belongs to an earlier flush; call without a cursor to take the symbols updated since`,
        );
      }
      const info = table(cache, 'symbolInfo');
      const rows = set.names.map((name) => info.get(name)).filter((row): row is Row => row !== undefined);
      const flush = set.flush;
      const r = pageOf(rows, (row) => row.symbol as string, { limit: page.limit, after: page.after?.[1] }, ordinal);
      const last = r.items[r.items.length - 1];
      return { data: r.items, paging: pagingMeta(r.paging.hasMore, last ? [flush, last.symbol] : undefined) };
    });
  }),

  /** The 32 security-group slots in slot order, each as the contract's group (name, description). */
  bind(symbols.SymbolsGroupsGet, (ctx) =>
    fromCache(ctx, () => {
      const rows = table(ctx.platform.cache, 'symbolGroups').page(undefined, undefined).items;
      return { data: rows.map(shapeGroup) };
    }),
  ),
];
