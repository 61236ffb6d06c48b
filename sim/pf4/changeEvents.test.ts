/**
 * Every PF4 change a broker caches is announced: a mirror that starts from a snapshot (users, trades, ticks, symbols,
 * groups with their securities, margin levels, the online list, news headers, symbol groups, symbol sessions and
 * summaries) and applies only the recorded change events, as a broker's cache does (closed trades kept from the
 * deletes, bodies from their requests, symbol summaries moved by ticks and symbol changes), stays equal to the
 * world after each command and tick: account edits, money moves, dealing, pending activation, partial closes,
 * administrator edits and deletes, swaps, stops and their rollback, stop-out, restores, expiry, group and symbol
 * changes, the catalog refresh, chart writes, symbol groups, news and the online churn. Failed commands announce
 * nothing. Trade profit and close price, and a margin level's equity, free margin and level, follow the quote and are
 * left out, as a broker recomputes them.
 */
import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../test/support/sim/worldHarness.js';
import { pf4Harness } from '../../test/support/sim/worldHarness.js';

type Kind =
  | 'users'
  | 'trades'
  | 'ticks'
  | 'symbols'
  | 'groups'
  | 'margin'
  | 'online'
  | 'news'
  | 'symbolGroups'
  | 'newsBodies'
  | 'symbolSessions'
  | 'symbolInfo';
type Rec = Record<string, any>;
const KEY: Record<Kind, string> = {
  users: 'login',
  trades: 'order',
  ticks: 'symbol',
  symbols: 'symbol',
  groups: 'group',
  margin: 'login',
  online: 'login',
  news: 'key',
  symbolGroups: 'pos',
  newsBodies: 'key',
  symbolSessions: 'symbol',
  symbolInfo: 'symbol',
};
/** Kinds compared whole with a fresh snapshot after every step. */
const COMPARED = [
  'users',
  'trades',
  'ticks',
  'symbols',
  'groups',
  'margin',
  'online',
  'news',
  'symbolGroups',
  'symbolSessions',
  'symbolInfo',
] as const;
/** Kinds whose update may bring a key the mirror lacks. */
const UPSERTS: Kind[] = ['margin', 'newsBodies', 'symbolInfo'];
const DAY_MS = 86_400_000;

/**
 * A symbol summary moved by one tick, as a broker derives it: prices, spread in points, time, direction against the
 * previous tick when that is at most a day older, and the day's high and low, restarted on a new UTC day.
 */
function afterTick(previous: Rec, tick: Rec): Rec {
  const time = Date.parse(tick.time);
  const before = Date.parse(previous.lastTime);
  const recent = before <= time && before >= time - DAY_MS;
  const sameDay = Math.floor(before / DAY_MS) === Math.floor(time / DAY_MS);
  return {
    ...previous,
    spread: Math.round((tick.ask - tick.bid) / previous.point),
    direction: !recent || tick.bid === previous.bid ? 'None' : tick.bid > previous.bid ? 'Up' : 'Down',
    bid: tick.bid,
    ask: tick.ask,
    high: sameDay ? Math.max(previous.high, tick.bid) : tick.bid,
    low: sameDay ? Math.min(previous.low, tick.bid) : tick.bid,
    lastTime: tick.time,
  };
}
type Mirror = Record<Kind, Map<unknown, unknown>>;
/** Kinds a snapshot does not carry: the mirror starts them empty. */
const LIVE_ONLY: Kind[] = ['newsBodies'];

/** A record as a cache keeps it: without the figures that follow the quote. */
function cached(kind: Kind, record: Rec): unknown {
  if (kind === 'trades') {
    const { profit: _p, closePrice: _c, ...rest } = record;
    return rest;
  }
  if (kind === 'margin') {
    const { updated: _u, equity: _e, free: _f, level: _l, ...rest } = record;
    return rest;
  }
  return record;
}

describe('change events', () => {
  it('keep a mirror built from one snapshot equal to the world through every kind of change', () => {
    const h = pf4Harness({ accounts: 40, trades: 0, symbols: 6 }, 11);
    const { world } = h;
    world.feed.inject('EURUSD', 1.1, 1.1001);
    world.feed.inject('GBPUSD', 1.25, 1.2501);

    /** What the world holds now, as a broker would cache it. */
    const current = (): Mirror => {
      const out = {} as Mirror;
      for (const part of world.snapshot()) {
        const kind = part.kind as Kind;
        const toWire = part.toWire as (row: unknown) => Rec;
        out[kind] = new Map(
          part.rows.map((row) => {
            const record = toWire(row);
            return [record[KEY[kind]], cached(kind, record)];
          }),
        );
      }
      for (const kind of LIVE_ONLY) out[kind] = new Map();
      return out;
    };
    const mirror = current();
    // The snapshot's online list and margin levels are the live commands' answers.
    expect([...mirror.online.values()]).toEqual(h.call('OnlineRequest').items);
    expect([...mirror.margin.values()]).toEqual(h.call('MarginsRequest').map((l: Rec) => cached('margin', l)));
    expect([...mirror.news.values()]).toEqual(h.call('NewsRequest'));
    expect([...mirror.symbolGroups.values()].map(({ pos: _p, ...entry }: any) => entry)).toEqual(
      h.call('CfgRequestSymbolGroup'),
    );
    // Sessions and summaries as SymbolSessionsGet and SymbolInfoRequest answer them.
    expect(mirror.symbolSessions.size).toBe(6);
    for (const [symbol, row] of mirror.symbolSessions) {
      expect((row as Rec).days).toEqual(h.call('SymbolSessionsGet', { symbol }));
      expect(mirror.symbolInfo.get(symbol)).toEqual(h.call('SymbolInfoRequest', { symbol }));
    }
    // Groups carry their security entries and margin overrides as the group commands answer them.
    for (const group of mirror.groups.values() as IterableIterator<Rec>) {
      expect(group.secGroups).toEqual(h.call('GroupSecGroupsGet', { group: group.group }));
      expect(group.secMargins.slice(0, group.secMarginsTotal)).toEqual(
        h.call('GroupSecMarginsGet', { group: group.group }),
      );
      expect(group.secMargins).toHaveLength(128);
    }
    h.events.length = 0;

    const apply = (events: RecordedEvent[]) => {
      for (const { kind: k, op, record } of events) {
        const kind = k as Kind;
        expect(KEY[kind], `a ${kind} event`).toBeDefined();
        const key = record[KEY[kind]];
        const table = mirror[kind];
        if (UPSERTS.includes(kind) && op !== 'delete') {
          // A login's first open trade or order brings its level as an update; a body or a summary arrives as one.
          expect(op, `${kind} events are updates and deletes`).toBe('update');
        } else if (op === 'add') {
          expect(table.has(key), `${kind} add of existing ${String(key)}`).toBe(false);
        } else {
          expect(table.has(key), `${kind} ${op} of unknown ${String(key)}`).toBe(true);
        }
        if (op === 'delete' && kind === 'trades') {
          // A trade leaves with its final record, which a broker keeps among the recently closed.
          expect(record.tradeRecordState, `trades delete of ${String(key)}`).toMatch(/^(Closed|Deleted)/);
          expect(Date.parse(record.closeTime)).toBeGreaterThan(Date.parse(record.openTime) - 1);
          closed.set(key, record);
          table.delete(key);
        } else if (op === 'delete') {
          expect(Object.keys(record), `${kind} delete carries the key only`).toEqual([KEY[kind]]);
          table.delete(key);
          // A symbol leaving the active set takes its summary along.
          if (kind === 'symbols') mirror.symbolInfo.delete(key);
        } else {
          table.set(key, cached(kind, record));
          // A trade open again (a rolled-back close) is no longer among the closed.
          if (kind === 'trades') closed.delete(key);
          const info = mirror.symbolInfo.get(key) as Rec | undefined;
          if (kind === 'ticks' && info) mirror.symbolInfo.set(key, afterTick(info, record));
          if (kind === 'symbols' && info) {
            mirror.symbolInfo.set(key, { ...info, digits: record.digits, type: record.type, point: record.point });
          }
        }
      }
    };
    /** The recently closed trades as a broker keeps them from the trades deletes: each is the history's record. */
    const closed = new Map<unknown, Rec>();
    const closedAgree = (name: string) => {
      for (const [order, record] of closed) {
        expect(record, `${name}: closed trade ${String(order)}`).toEqual(world.engine.historyRecord(order as number));
        expect(mirror.trades.has(order), `${name}: closed trade ${String(order)} is not open`).toBe(false);
      }
    };

    /** Runs one change and checks which kinds it announced and that the mirror still matches the world. */
    const step = <T>(name: string, kinds: Kind[], change: () => T): T => {
      const result = change();
      const announced = [...new Set(h.events.map((e) => e.kind))].sort();
      expect(announced, name).toEqual([...kinds].sort());
      apply(h.events.splice(0));
      const now = current();
      for (const kind of COMPARED) {
        expect(mirror[kind], `${name}: ${kind}`).toEqual(now[kind]);
      }
      closedAgree(name);
      return result;
    };
    const tick = (symbol: string, bid: number, ask: number) => () => h.call('SymbolSendTick', { symbol, bid, ask });
    const tx = (fields: Rec) => () => h.call('TradeTransaction', fields);
    const open = (login: number, fields: Rec) =>
      tx({
        tradeTransactionType: 'BrOrderOpen',
        orderBy: login,
        symbol: 'EURUSD',
        tradeCommand: 'Buy',
        volume: 100,
        ...fields,
      });

    // Accounts and money.
    const a = step(
      'UserRecordNew',
      ['users'],
      () => h.call('UserRecordNew', { record: { group: 'real\\vip', name: 'Alice', leverage: 100 } }).login,
    );
    const b = step(
      'UserRecordNew',
      ['users'],
      () => h.call('UserRecordNew', { record: { group: 'demo\\forex', name: 'Bob', leverage: 100 } }).login,
    );
    // Accounts without open trades or orders have no margin level in a broker's cache: their money moves tell it nothing.
    step(
      'deposit',
      ['users'],
      tx({ tradeTransactionType: 'BrBalance', tradeCommand: 'Balance', orderBy: a, price: 10_000 }),
    );
    step(
      'deposit',
      ['users'],
      tx({ tradeTransactionType: 'BrBalance', tradeCommand: 'Balance', orderBy: b, price: 5000 }),
    );
    step(
      'credit',
      ['users'],
      tx({ tradeTransactionType: 'BrBalance', tradeCommand: 'Credit', orderBy: b, price: 500 }),
    );
    expect(mirror.margin.has(a)).toBe(false);

    // Dealing.
    const buy = step('open', ['trades', 'margin'], open(a, {}));
    const limit = step('pending', ['trades', 'margin'], open(a, { tradeCommand: 'BuyLimit', price: 1.099 }));
    const sell = step('open', ['trades', 'margin'], open(b, { symbol: 'GBPUSD', tradeCommand: 'Sell', volume: 50 }));
    step('modify', ['trades'], tx({ tradeTransactionType: 'BrOrderModify', order: buy.order, sl: 1.095, tp: 1.12 }));
    step('pending activation', ['ticks', 'trades', 'margin'], tick('EURUSD', 1.0988, 1.0989));
    step(
      'partial close',
      ['users', 'trades', 'margin'],
      tx({ tradeTransactionType: 'BrOrderClose', order: limit.order, volume: 40 }),
    );
    const remainder = h.call('TradesUserRequest', { login: a }).find((t: Rec) => t.comment === `from #${limit.order}`);
    // The closed part keeps the ticket.
    expect(closed.get(limit.order)).toMatchObject({
      tradeRecordState: 'ClosedPart',
      volume: 40,
      comment: `to #${remainder.order}`,
    });
    step('AdmTradeRecordModify', ['trades', 'margin'], () =>
      h.call('AdmTradeRecordModify', { ticket: remainder.order, record: { storage: -4, magic: 9 } }),
    );

    // Manager edits of accounts: the margin record carries balance, leverage and group.
    step('UserRecordUpdate name', ['users'], () =>
      h.call('UserRecordUpdate', { login: a, record: { name: 'Alice A.' } }),
    );
    // Balance and credit move only by balance and credit transactions: an update keeps them, so the margin stays.
    step('UserRecordUpdate balance', ['users'], () =>
      h.call('UserRecordUpdate', { login: a, record: { balance: 12_000 } }),
    );
    step('UserRecordUpdate leverage', ['users', 'margin'], () =>
      h.call('UserRecordUpdate', { login: a, record: { leverage: 200 } }),
    );
    step('UsersGroupOp SetGroup', ['users', 'margin'], () =>
      h.call('UsersGroupOp', { record: { command: 'SetGroup', newGroup: 'real\\ecn', logins: [b] } }),
    );
    step('UsersGroupOp Leverage', ['users', 'margin'], () =>
      h.call('UsersGroupOp', { record: { command: 'Leverage', leverage: 50, logins: [b] } }),
    );
    step('UsersGroupOp Disable', ['users'], () =>
      h.call('UsersGroupOp', { record: { command: 'Disable', logins: [b] } }),
    );

    // Groups: a level change that reclassifies an account reaches its margin record.
    step('GroupRecordUpdate margin call', ['groups', 'margin'], () =>
      h.call('GroupRecordUpdate', { group: 'real\\vip', record: { marginCall: 5000 } }),
    );
    expect(mirror.margin.get(a)).toMatchObject({ levelType: 'MarginCall' });
    step('GroupRecordUpdate company', ['groups'], () =>
      h.call('GroupRecordUpdate', { group: 'real\\vip', record: { company: 'VIP desk' } }),
    );
    step('GroupRecordUpdate margin call back', ['groups', 'margin'], () =>
      h.call('GroupRecordUpdate', { group: 'real\\vip', record: { marginCall: 100 } }),
    );
    step('CfgShiftGroup', [], () => h.call('CfgShiftGroup', { pos: 0, shift: 1 }));

    // Closes, deletes, swaps, stops and their rollback.
    expect(mirror.margin.has(b)).toBe(true);
    step('close', ['users', 'trades', 'margin'], tx({ tradeTransactionType: 'BrOrderClose', order: sell.order }));
    // That was the account's last open trade: a margin delete took its level out.
    expect(mirror.margin.has(b)).toBe(false);
    const stop = step('pending', ['trades', 'margin'], open(a, { tradeCommand: 'SellStop', price: 1.09 }));
    expect(closed.get(sell.order)).toMatchObject({ tradeRecordState: 'ClosedNormal', activationType: 'None' });
    step('delete pending', ['trades', 'margin'], tx({ tradeTransactionType: 'BrOrderDelete', order: stop.order }));
    step('AdmTradesDelete', ['trades', 'margin'], () => h.call('AdmTradesDelete', { orders: [remainder.order] }));
    expect(closed.get(stop.order)).toMatchObject({ tradeRecordState: 'Deleted', tradeCommand: 'SellStop' });
    expect(closed.get(remainder.order)).toMatchObject({ tradeRecordState: 'Deleted', tradeCommand: 'Buy' });
    step('rollover', ['trades'], () => world.rollover(Date.UTC(2026, 0, 5)));
    step('stop loss', ['ticks', 'users', 'trades', 'margin'], tick('EURUSD', 1.0949, 1.095));
    expect(closed.get(buy.order)).toMatchObject({ tradeRecordState: 'ClosedNormal', activationType: 'SL' });
    step('TradeClearRollback', ['users', 'trades', 'margin'], () => h.call('TradeClearRollback', { order: buy.order }));
    expect(closed.has(buy.order)).toBe(false);
    const expiring = step(
      'pending',
      ['trades', 'margin'],
      open(a, { tradeCommand: 'BuyLimit', price: 1.09, expiration: new Date(Date.now() + 11 * 60_000).toISOString() }),
    );
    step('expiry', ['trades', 'margin'], () => world.engine.sweep(Date.now() + 12 * 60_000));
    expect(mirror.trades.has(expiring.order)).toBe(false);
    expect(closed.get(expiring.order)).toMatchObject({ tradeRecordState: 'Deleted' });

    // Stop-out.
    const thin = step(
      'UserRecordNew',
      ['users'],
      () => h.call('UserRecordNew', { record: { group: 'real\\vip', name: 'Thin', leverage: 100 } }).login,
    );
    step(
      'deposit',
      ['users'],
      tx({ tradeTransactionType: 'BrBalance', tradeCommand: 'Balance', orderBy: thin, price: 2000 }),
    );
    step('open', ['trades', 'margin'], open(thin, { volume: 150 }));
    step('stop-out', ['ticks', 'users', 'trades', 'margin'], tick('EURUSD', 1.0856, 1.0857));
    // Its last trade closed: its margin level left the cache.
    expect(mirror.margin.has(thin)).toBe(false);

    // Restores.
    step('BackupRestoreUsers', ['users', 'margin'], () =>
      h.call('BackupRestoreUsers', {
        records: [
          { login: a, balance: 20_000 },
          { login: 300000, group: 'demo\\forex', name: 'Restored' },
        ],
      }),
    );
    // A restored balance is not explained by the history; the fix writes the history's balance back.
    step('AdmBalanceFix', ['users', 'margin'], () => h.call('AdmBalanceFix', { logins: [a] }));
    step('BackupRestoreOrders', ['trades', 'margin'], () =>
      h.call('BackupRestoreOrders', {
        records: [{ order: 9000001, login: a, symbol: 'GBPUSD', tradeCommand: 'Buy', volume: 10, openPrice: 1.25 }],
      }),
    );

    // Symbols.
    step('CfgUpdateSymbol', ['symbols'], () =>
      h.call('CfgUpdateSymbol', { symbol: 'USDJPY', record: { description: 'Dollar yen' } }),
    );
    // A summary follows its symbol's digits and type; its spread follows the quotes.
    step('CfgUpdateSymbol digits and type', ['symbols'], () =>
      h.call('CfgUpdateSymbol', { symbol: 'USDJPY', record: { digits: 2, type: 3 } }),
    );
    expect(mirror.symbolInfo.get('USDJPY')).toMatchObject({ digits: 2, type: 3 });
    const jpy = (mirror.symbolInfo.get('USDJPY') as Rec).bid as number;
    step('tick', ['ticks'], tick('USDJPY', jpy + 0.1, jpy + 0.12));
    step('tick', ['ticks'], tick('USDJPY', jpy, jpy + 0.02));
    expect(mirror.symbolInfo.get('USDJPY')).toMatchObject({ direction: 'Down', high: jpy + 0.1, low: jpy, spread: 20 });
    step('SymbolChange', ['symbols'], () => h.call('SymbolChange', { record: { symbol: 'USDJPY', spread: 17 } }));
    // The mirror holds the active set: a hidden symbol leaves it, changes to it stay quiet, and it comes back as it stands.
    step('SymbolHide', ['symbols'], () => h.call('SymbolHide', { symbol: 'USDJPY' }));
    expect(mirror.symbols.has('USDJPY')).toBe(false);
    expect(mirror.symbolInfo.has('USDJPY')).toBe(false);
    step('CfgUpdateSymbol of a hidden symbol', [], () =>
      h.call('CfgUpdateSymbol', { symbol: 'USDJPY', record: { description: 'Yen' } }),
    );
    step('SymbolChange of a hidden symbol', [], () =>
      h.call('SymbolChange', { record: { symbol: 'USDJPY', stopsLevel: 15 } }),
    );
    // Back in the active set: its summary comes whole, the day's high and low included.
    step('SymbolAdd', ['symbols', 'symbolInfo'], () => h.call('SymbolAdd', { symbol: 'USDJPY' }));
    expect(mirror.symbols.get('USDJPY')).toMatchObject({ description: 'Yen', stopsLevel: 15 });
    expect(mirror.symbolInfo.get('USDJPY')).toMatchObject({ direction: 'Down', high: jpy + 0.1, low: jpy });
    step('tick', ['ticks'], tick('USDJPY', jpy + 0.05, jpy + 0.07));
    expect(mirror.symbolInfo.get('USDJPY')).toMatchObject({ direction: 'Up', high: jpy + 0.1, low: jpy });
    step('SymbolAdd of an active symbol', [], () => h.call('SymbolAdd', { symbol: 'USDJPY' }));

    // Chart writes that change the day's bar move the summary; others do not.
    const today = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS).toISOString();
    const eur = mirror.symbolInfo.get('EURUSD') as Rec;
    step('ChartAdd of the day bar', ['symbolInfo'], () =>
      h.call('ChartAdd', {
        symbol: 'EURUSD',
        period: 'D1',
        record: {
          rates: [{ time: today, open: eur.bid, high: 2, low: 0.5, close: eur.bid }],
        },
      }),
    );
    expect(mirror.symbolInfo.get('EURUSD')).toMatchObject({ high: 2, low: 0.5 });
    step('tick', ['ticks'], tick('EURUSD', 1.1, 1.1001));
    expect(mirror.symbolInfo.get('EURUSD')).toMatchObject({ high: 2, low: 0.5, bid: 1.1 });
    step('ChartAdd of an old minute bar', [], () =>
      h.call('ChartAdd', {
        symbol: 'EURUSD',
        period: 'M1',
        record: {
          rates: [{ time: '2025-01-06T10:00:00Z', open: 1, high: 1, low: 1, close: 1 }],
        },
      }),
    );
    step('HistoryCorrect', ['symbolInfo'], () => h.call('HistoryCorrect', { symbol: 'EURUSD' }));
    expect((mirror.symbolInfo.get('EURUSD') as Rec).high).toBeLessThan(2);
    step('SrvChartsSync', [], () => h.call('SrvChartsSync'));

    step('SymbolHide', ['symbols'], () => h.call('SymbolHide', { symbol: 'AUDUSD' }));
    step('SymbolsRefresh', ['symbols'], () => h.call('SymbolsRefresh'));
    const configured = h.call('CfgRequestSymbol').map((r: Rec) => r.symbol);
    const last = configured.length - 1;
    expect(configured[last]).not.toBe('AUDUSD');
    // Sessions are kept for every configured symbol, hidden ones too.
    step('CfgDeleteSymbol', ['symbols', 'symbolSessions'], () => h.call('CfgDeleteSymbol', { pos: last }));
    expect(mirror.symbolSessions.has(configured[last])).toBe(false);
    expect(mirror.symbolInfo.has(configured[last])).toBe(false);
    expect(mirror.symbolSessions.has('AUDUSD')).toBe(true);
    step('CfgDeleteSymbol of a hidden symbol', ['symbolSessions'], () =>
      h.call('CfgDeleteSymbol', { pos: configured.indexOf('AUDUSD') }),
    );
    step('CfgShiftSymbol', [], () => h.call('CfgShiftSymbol', { pos: 0, shift: 1 }));

    // Symbol group slots and news headers.
    step('CfgUpdateSymbolGroup', ['symbolGroups'], () =>
      h.call('CfgUpdateSymbolGroup', { pos: 7, record: { name: 'Exotics', description: 'Exotic pairs' } }),
    );
    expect(mirror.symbolGroups.get(7)).toEqual({ pos: 7, name: 'Exotics', description: 'Exotic pairs' });
    step('CfgUpdateSymbolGroup without a description', ['symbolGroups'], () =>
      h.call('CfgUpdateSymbolGroup', { pos: 8, record: { name: 'Bonds' } }),
    );
    step('NewsSend', ['news'], () =>
      h.call('NewsSend', { record: { topic: 'Rates unchanged', category: 'Economy', body: 'Full text' } }),
    );
    expect(mirror.news.size).toBe(21);
    // A body is not in the snapshot: it follows a NewsBodyRequest on the change stream.
    step('NewsBodyRequest', ['newsBodies'], () => h.call('NewsBodyRequest', { key: 21 }));
    step('NewsBodyRequest', ['newsBodies'], () => h.call('NewsBodyRequest', { key: 3 }));
    expect(mirror.newsBodies.get(21)).toEqual({ key: 21, body: 'Full text' });
    for (const [key, row] of mirror.newsBodies) expect((row as Rec).body).toBe(h.call('NewsBodyGet', { key }));

    // The online list: clients come and go; an online account that changes group or is deleted is announced there too.
    for (let i = 0; i < 5; i++) step('online churn', ['online'], () => world.services.churnOnline());
    const online = [...world.services.online].filter((login) => h.call('TradesUserRequest', { login }).length === 0);
    expect(online.length).toBeGreaterThan(1);
    step('SetGroup of an online account', ['users', 'online'], () =>
      h.call('UsersGroupOp', {
        record: {
          command: 'SetGroup',
          newGroup: 'real\\ecn',
          logins: [online[0]],
        },
      }),
    );
    expect(mirror.online.get(online[0])).toEqual({ login: online[0], group: 'real\\ecn' });
    step('UserRecordUpdate group of an online account', ['users', 'online'], () =>
      h.call('UserRecordUpdate', {
        login: online[1],
        record: { group: 'demo\\pro' },
      }),
    );
    step('Delete of an online account', ['users', 'online'], () =>
      h.call('UsersGroupOp', { record: { command: 'Delete', logins: [online[0]] } }),
    );
    expect(mirror.online.has(online[0])).toBe(false);

    // Failed commands change nothing and announce nothing.
    step('failures', [], () => {
      h.fails('AdmTradesDelete', { orders: [buy.order, 4242] });
      h.fails('SymbolChange', { record: { symbol: 'EURUSD', spread: -3 } });
      h.fails('UserRecordUpdate', { login: a, record: { group: 'no\\such' } });
      h.fails('TradeTransaction', {
        tradeTransactionType: 'BrOrderOpen',
        orderBy: a,
        symbol: 'EURUSD',
        tradeCommand: 'Buy',
        volume: 0,
      });
      h.fails('UsersGroupOp', { record: { command: 'Delete', logins: [a] } });
      h.fails('NewsBodyRequest', { key: 999 });
    });
  });
});
