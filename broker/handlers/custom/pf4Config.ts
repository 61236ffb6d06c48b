/**
 * PF4 configuration lists the server does not key (holidays, firewall rules, data servers, gateway markups, live
 * updates, syncs): read live and whole, sorted by the entry's declared key with the entry's place in the server's own
 * order as the last tie-breaker, and paged after the cursor. Two entries may share a key (two rules for one address
 * range), and a key field may be empty (null), so a plain key cursor could skip an entry or fail to decode: here the
 * cursor is the last item's key plus its server position, and null sorts before any number, numbers before text.
 */
import type { Operation } from '../../../shared/catalog/index.js';
import { config } from '../../../shared/catalog/v2/pf4/index.js';
import { shapeRecord } from '../../../shared/records/shape.js';
import { pageOf, pageRequest } from '../paging.js';
import type { Handler } from '../handler.js';
import { bind } from './bind.js';

type Row = Record<string, unknown>;
type KeyPart = number | string | null;
type TieKey = KeyPart[];

/** null first, then numbers (numerically), then text (by code unit, ordinal). */
function comparePart(a: KeyPart, b: KeyPart): number {
  const rank = (v: KeyPart) => (v === null ? 0 : typeof v === 'number' ? 1 : 2);
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (a === null || b === null) return 0;
  return a < b ? -1 : a > b ? 1 : 0;
}

export function compareTieKeys(a: TieKey, b: TieKey): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const c = comparePart(a[i], b[i]);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

/** A key part as the sort sees it: numbers and text as they are, anything else (null, absent) as null. */
function partOf(value: unknown): KeyPart {
  return typeof value === 'number' || typeof value === 'string' ? value : null;
}

/** A cursor key of `arity` fields plus a server position. */
function isTieKey(arity: number) {
  return (v: unknown): v is TieKey => Array.isArray(v) && v.length === arity + 1
    && v.slice(0, arity).every((p) => p === null || typeof p === 'string' || (typeof p === 'number' && Number.isSafeInteger(p)))
    && typeof v[arity] === 'number' && Number.isSafeInteger(v[arity]) && v[arity] >= 0;
}

/** The paged live read of an unkeyed configuration list: `CfgRequest<List>`, sorted by the entry's key, then position. */
export function tieBrokenListPage(entry: Operation): Handler {
  if (!entry.paged || typeof entry.response !== 'string') throw new Error(`${entry.id}: a configuration list page needs paging and a record`);
  const fields = typeof entry.paged.key === 'string' ? [entry.paged.key] : [...entry.paged.key];
  const shape = shapeRecord(entry.response.replace(/\[\]$/, ''));
  const command = entry.name;
  return async (ctx) => {
    const page = pageRequest(ctx.args as Row, isTieKey(fields.length));
    const got = await ctx.platform.session.request(command, undefined, ctx.deadline);
    const rows = (Array.isArray(got) ? got : []).map((item, pos) => {
      const row = shape(item) as Row;
      return { row, key: [...fields.map((f) => partOf(row[f])), pos] as TieKey };
    });
    rows.sort((a, b) => compareTieKeys(a.key, b.key));
    const r = pageOf(rows, (e) => e.key, page, compareTieKeys);
    return { data: r.items.map((e) => e.row), paging: r.paging };
  };
}

export const pf4ConfigBindings = [
  bind(config.CfgRequestHoliday, tieBrokenListPage(config.CfgRequestHoliday)),
  bind(config.CfgRequestAccess, tieBrokenListPage(config.CfgRequestAccess)),
  bind(config.CfgRequestDataServer, tieBrokenListPage(config.CfgRequestDataServer)),
  bind(config.CfgRequestGatewayMarkup, tieBrokenListPage(config.CfgRequestGatewayMarkup)),
  bind(config.CfgRequestLiveUpdate, tieBrokenListPage(config.CfgRequestLiveUpdate)),
  bind(config.CfgRequestSync, tieBrokenListPage(config.CfgRequestSync)),
];
