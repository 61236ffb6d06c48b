/**
 * v1 PF5 operations with logic beyond a generic answer: cached reads by a list of keys or logins (each once, in the
 * order asked), cached positions and orders selected by their account's group (the mask) and symbol, joined with the
 * cached accounts, and the two live answers whose records the contract does not have, shaped to the records the
 * catalog publishes (`PF5UserAccount`, `PF5ChartBar`).
 */
import { maskMatcher, pf5V1, symbolsOf } from '../../../shared/catalog/v1/pf5.js';
import { EPOCH } from '../../../shared/records/shape.js';
import type { Row } from '../../cache/pumpCache.js';
import { fromCache, type Handler, type HandlerContext } from '../handler.js';
import { bind } from './bind.js';
import type { Operation } from '../../../shared/catalog/index.js';
import type { Int64 } from '../../../shared/int64.js';

type Property = { type?: string; format?: string };

/**
 * Shapes a live answer as an inline object record: every published field present, in order, with the server's value
 * when it has the field's type (integers truncated), else the type's empty value; other members dropped.
 */
export function inlineShaper(schema: { properties?: Record<string, Property> }): (value: unknown) => Row {
  const fields = Object.entries(schema.properties ?? {});
  return (value) => {
    const from = (value !== null && typeof value === 'object' ? value : {}) as Row;
    const out: Row = {};
    for (const [name, p] of fields) {
      const got = from[name];
      if (p.type === 'string') out[name] = typeof got === 'string' ? got : p.format === 'date-time' ? EPOCH : '';
      else if (p.type === 'boolean') out[name] = got === true;
      // A bigint is an exact int64 beyond 2^53 − 1 (an account's login): kept as it is.
      else if (typeof got === 'bigint') out[name] = p.type === 'integer' ? got : Number(got);
      else
        out[name] =
          typeof got === 'number' && Number.isFinite(got) ? (p.type === 'integer' ? Math.trunc(got) : got) : 0;
    }
    return out;
  };
}

/** A live command answered as one inline record (or a list of them when the response is an array). */
function liveShaped(
  command: string,
  response: Record<string, unknown>,
  keyedRead = false,
): Handler<Record<string, unknown>> {
  const list = response.type === 'array';
  const shape = inlineShaper((list ? response.items : response) as { properties?: Record<string, Property> });
  return async (ctx) => {
    const got = await ctx.platform.session.request(command, { ...ctx.args }, ctx.deadline, { keyedRead });
    return { data: list ? (Array.isArray(got) ? got.map(shape) : []) : shape(got) };
  };
}

/** Distinct values in the order first given. */
const distinct = (values: readonly Int64[]) => [...new Set(values)];

/** The cached rows of `table` with the given keys, each once, in the order asked; unknown keys are left out. */
function byKeys(ctx: HandlerContext<unknown>, table: string, keys: readonly Int64[]) {
  return fromCache(ctx, () => {
    const t = ctx.platform.cache.table(table);
    if (!t) return { rows: [] };
    return {
      rows: t.rowTexts(
        distinct(keys)
          .map((k) => t.view(k))
          .filter((r): r is Row => r !== undefined),
      ),
    };
  });
}

/** The cached rows of `table` of each login (its `login` index), login by login in the order asked, by key within one. */
function byLogins(ctx: HandlerContext<unknown>, table: string, logins: readonly Int64[]) {
  return fromCache(ctx, () => {
    const t = ctx.platform.cache.table(table);
    if (!t) return { rows: [] };
    return { rows: t.rowTexts(distinct(logins).flatMap((login) => t.lookupViews('login', login))) };
  });
}

/**
 * The cached rows of `table` (by key) whose account is in a group the mask selects and, when a symbol list is given,
 * whose symbol is listed. An account's group is read from the cached accounts, once per login.
 */
function byAccountGroup(ctx: HandlerContext<unknown>, table: string, mask: string, symbols?: string) {
  return fromCache(ctx, () => {
    const selects = maskMatcher(mask);
    const listed = symbols === undefined ? undefined : symbolsOf(symbols);
    const member = new Map<unknown, boolean>();
    const inGroup = (login: unknown) => {
      let m = member.get(login);
      if (m === undefined) {
        const group =
          typeof login === 'number' || typeof login === 'bigint'
            ? ctx.platform.cache.view('users', login)?.group
            : undefined;
        member.set(login, (m = typeof group === 'string' && selects(group)));
      }
      return m;
    };
    const t = ctx.platform.cache.table(table);
    if (!t) return { rows: [] };
    // Views: the symbol, login and group read here are kept beside each packed row's text (KINDS).
    const rows = t
      .pageViews(undefined, undefined)
      .items.filter((r) => (!listed || listed.has(String(r.symbol))) && inGroup(r.login));
    return { rows: t.rowTexts(rows) };
  });
}

const account = pf5V1.UserAccountGet.response as Record<string, unknown>;
const bars = pf5V1.ChartRequest.response as Record<string, unknown>;

export const v1Pf5Bindings = [
  bind(pf5V1.UserAccountGet, liveShaped('UserAccountGet', account, true)),
  bind(pf5V1.UserAccountRequest, liveShaped('UserAccountRequest', account, true)),
  // The windowed entries are typed as any operation: their arguments are the record the live read forwards.
  bind(pf5V1.ChartRequest as Operation<Record<string, unknown>>, liveShaped('ChartRequest', bars)),
  bind(pf5V1.UserGetByLogins, (ctx) => byKeys(ctx, 'users', ctx.args.logins)),
  bind(pf5V1.PositionGetByTickets, (ctx) => byKeys(ctx, 'positions', ctx.args.tickets)),
  bind(pf5V1.OrderGetByTickets, (ctx) => byKeys(ctx, 'orders', ctx.args.tickets)),
  bind(pf5V1.PositionGetByLogins, (ctx) => byLogins(ctx, 'positions', ctx.args.logins)),
  bind(pf5V1.OrderGetByLogins, (ctx) => byLogins(ctx, 'orders', ctx.args.logins)),
  bind(pf5V1.PositionGetBySymbol, (ctx) => byAccountGroup(ctx, 'positions', ctx.args.mask, ctx.args.symbol)),
  bind(pf5V1.OrderGetBySymbol, (ctx) => byAccountGroup(ctx, 'orders', ctx.args.mask, ctx.args.symbol)),
  bind(pf5V1.OrderGetByGroup, (ctx) => byAccountGroup(ctx, 'orders', ctx.args.mask)),
];
