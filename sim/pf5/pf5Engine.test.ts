/**
 * The PF5 server on a small world driven by manual ticks: UserAdd's rules, dealing on hedging and netting accounts,
 * pending fills, stops and stop-out, commissions, the batch deletes with their not-main and not-found rules, patches
 * of groups and symbols, and minute bars.
 */
import { describe, expect, it } from 'vitest';
import { PF5_RESULT as R } from '../../shared/resultCodes.js';
import * as records from '../../shared/records/contract.js';
import { pf5Harness } from '../../test/support/sim/worldHarness.js';

function trader(group: string, deposit = 10_000) {
  const h = pf5Harness({ accounts: 10, trades: 20 });
  h.world.feed.inject('EURUSD', 1.1, 1.1001);
  const user = h.call('UserAdd', { record: { group, leverage: 100, firstName: 'Pat', lastName: 'Trader' } });
  if (deposit) h.call('DealerBalance', { login: user.login, type: 'Balance', amount: deposit });
  const send = (fields: Record<string, unknown>) =>
    h.call('DealerSend', { login: user.login, symbol: 'EURUSD', type: 'Buy', volume: 10_000, ...fields });
  const tick = (bid: number, ask: number) => h.world.feed.inject('EURUSD', bid, ask);
  return { h, login: user.login as number, send, tick };
}

describe('UserAdd', () => {
  it('allocates the next login, generates a password pair that works, and never sends it', () => {
    const h = pf5Harness({ accounts: 10 });
    const user = h.call('UserAdd', { record: { group: 'demo\\retail', leverage: 100, firstName: 'Ada' } });
    records.PF5User.parse(user);
    expect(user).toMatchObject({ login: 500010, name: 'Ada', group: 'demo\\retail', leverage: 100 });
    const { main, investor } = h.world.passwordsOf(500010);
    expect(JSON.stringify(user)).not.toContain(main);
    expect(main).toMatch(/^(?=.*[a-z])(?=.*[A-Z])(?=.*\d).{10}$/);
    expect(h.call('UserPasswordCheck', { login: 500010, password: main })).toBe(true);
    expect(h.call('UserPasswordCheck', { login: 500010, type: 'Investor', password: investor })).toBe(true);
    expect(h.fails('UserPasswordCheck', { login: 500010, password: 'nope' }).code).toBe(R.UsrInvalidPassword);
  });

  it('applies the spec rules: required fields, existing, foreign and exhausted logins, bad records', () => {
    const h = pf5Harness({ accounts: 10 });
    const base = { group: 'demo\\retail', leverage: 100, lastName: 'Lovelace' };
    expect(h.fails('UserAdd', { record: { leverage: 100, lastName: 'X' } }).code).toBe(R.ErrParams);
    expect(h.fails('UserAdd', { record: { group: 'demo\\retail', lastName: 'X' } }).code).toBe(R.ErrParams);
    expect(h.fails('UserAdd', { record: { group: 'demo\\retail', leverage: 100 } }).message).toContain(
      'firstName or record.lastName',
    );
    expect(h.fails('UserAdd', { record: { ...base, login: 500003 } }).code).toBe(R.UsrLoginExist);
    expect(h.fails('UserAdd', { record: { ...base, login: 42 } }).code).toBe(R.UsrLoginProhibited);
    expect(h.fails('UserAdd', { record: { ...base, colour: 1 } }).code).toBe(R.ErrParams);
    expect(h.fails('UserAdd', { record: { ...base, group: 'nope' } }).code).toBe(R.ErrParams);
    expect(
      h.call('UserAdd', { record: { ...base, login: 600000, password: 'Secret123', passwordInvestor: 'Viewer123' } })
        .login,
    ).toBe(600000);
    expect(h.fails('UserAdd', { record: { ...base, password: 'weak', passwordInvestor: 'weak' } }).code).toBe(
      R.UsrInvalidPassword,
    );
    h.world.loginRange = { min: 500000, max: 600000 };
    expect(h.fails('UserAdd', { record: base }).code).toBe(R.UsrLoginExhausted);
  });

  it('names the weak password and the rule it breaks, and adds nobody', () => {
    const h = pf5Harness({ accounts: 2 });
    const base = { group: 'demo\\retail', leverage: 100, firstName: 'Ada' };
    const rule = 'must have at least 8 characters with a lower-case letter, an upper-case letter and a digit';
    h.events.length = 0;
    expect(h.fails('UserAdd', { record: { ...base, password: 'weak', passwordInvestor: 'Viewer123' } })).toEqual({
      code: R.UsrInvalidPassword,
      message: `record.password ${rule}`,
    });
    expect(h.fails('UserAdd', { record: { ...base, password: 'Secret123', passwordInvestor: 'viewer123' } })).toEqual({
      code: R.UsrInvalidPassword,
      message: `record.passwordInvestor ${rule}`,
    });
    expect(h.fails('UserAdd', { record: { ...base, password: 'NoDigitsHere', passwordInvestor: 'short' } })).toEqual({
      code: R.UsrInvalidPassword,
      message: `record.password ${rule}`,
    });
    h.call('GroupRecord', { group: 'demo\\retail', patch: { authPasswordMin: 12 } });
    expect(
      h.fails('UserAdd', { record: { ...base, password: 'Secret123456', passwordInvestor: 'Viewer12345' } }),
    ).toEqual({
      code: R.UsrInvalidPassword,
      message:
        'record.passwordInvestor must have at least 12 characters with a lower-case letter, an upper-case letter and a digit',
    });
    expect(h.world.users.size).toBe(2);
    expect(h.events.filter((e) => e.kind === 'users')).toEqual([]);
    expect(
      h.call('UserAdd', { record: { ...base, password: 'Secret123456', passwordInvestor: 'Viewer123456' } }).login,
    ).toBe(500002);
  });

  it('gives up after ten rejected generated pairs', () => {
    const h = pf5Harness({ accounts: 2 });
    h.call('GroupRecord', { group: 'demo\\retail', patch: { authPasswordMin: 20 } });
    const error = h.fails('UserAdd', { record: { group: 'demo\\retail', leverage: 100, firstName: 'Bob' } });
    expect(error).toEqual({ code: R.UsrInvalidPassword, message: 'no acceptable password pair in 10 attempts' });
  });

  it('updates and patches an account but not its balance', () => {
    const h = pf5Harness({ accounts: 3 });
    expect(h.call('UserUpdate', { record: { login: 500001, city: 'Oslo', balance: 1e9 } })).toMatchObject({
      city: 'Oslo',
      balance: h.world.users.get(500001)!.balance,
    });
    expect(h.call('UserRecord', { login: 500001, patch: { comment: 'vip' } }).comment).toBe('vip');
    expect(h.fails('UserRecord', { login: 500001, patch: { balance: 5 } }).code).toBe(R.ErrParams);
  });
});

describe('dealing', () => {
  it('opens a position per fill on a hedging account and closes the one named', () => {
    const { h, login, send, tick } = trader('demo\\retail');
    const first = send({});
    const second = send({});
    expect(first.position).not.toBe(second.position);
    expect(h.call('PositionGet', { login }).map((p: { volume: number }) => p.volume)).toEqual([10_000, 10_000]);
    tick(1.102, 1.1021);
    const close = send({ type: 'Sell', position: first.position });
    const deal = h.call('DealRequestByTicket', { ticket: close.deal });
    records.PF5Deal.parse(deal);
    expect(deal).toMatchObject({ entry: 'Out', action: 'Sell', price: 1.102, profit: 190, positionID: first.position });
    expect(h.call('UserRequest', { login }).balance).toBe(10_190);
    expect(h.call('PositionGet', { login }).map((p: { position: number }) => p.position)).toEqual([second.position]);
    expect(h.call('HistoryRequest', { login }).map((o: { state: string }) => o.state)).toEqual([
      'Filled',
      'Filled',
      'Filled',
    ]);
  });

  it('nets fills into one position per symbol, averaging, reducing and reversing it', () => {
    const { h, login, send, tick } = trader('demo\\netting');
    send({});
    tick(1.1009, 1.101);
    send({});
    const [position] = h.call('PositionGet', { login });
    records.PF5Position.parse(position);
    expect(position).toMatchObject({ action: 'Buy', volume: 20_000, priceOpen: 1.10055 });
    const reverse = send({ type: 'Sell', volume: 30_000 });
    expect(h.call('DealRequestByTicket', { ticket: reverse.deal })).toMatchObject({ entry: 'InOut', profit: 70 });
    expect(h.call('PositionGet', { login })).toMatchObject([{ action: 'Sell', volume: 10_000, priceOpen: 1.1009 }]);
  });

  it('charges the group commission on every deal, the opening and the closing one', () => {
    const { h, login, send, tick } = trader('real\\retail');
    const fill = send({ volume: 20_000 });
    expect(h.call('DealRequestByTicket', { ticket: fill.deal }).commission).toBe(-7);
    expect(h.call('UserRequest', { login }).balance).toBe(9993);
    tick(1.102, 1.1021);
    const close = send({ type: 'Sell', volume: 20_000, position: fill.position });
    expect(h.call('DealRequestByTicket', { ticket: close.deal })).toMatchObject({
      entry: 'Out',
      profit: 380,
      commission: -7,
    });
    // 10 000 - 7 to open, + 380 - 7 to close.
    expect(h.call('UserRequest', { login }).balance).toBe(10_366);
  });

  it('fills a pending order when the market reaches it and closes at the stop loss', () => {
    const { h, login, send, tick } = trader('demo\\retail');
    const placed = send({ type: 'BuyLimit', price: 1.099, priceSL: 1.095 });
    expect(h.events.some((e) => e.kind === 'orders' && e.op === 'add' && e.record.order === placed.order)).toBe(true);
    records.PF5Order.parse(h.call('OrderGet', { ticket: placed.order }));
    tick(1.0989, 1.099);
    expect(h.fails('OrderGet', { ticket: placed.order }).code).toBe(R.ErrNotfound);
    const [position] = h.call('PositionGet', { login });
    expect(position).toMatchObject({ position: placed.order, priceOpen: 1.099, priceSL: 1.095 });
    tick(1.0949, 1.095);
    expect(h.call('PositionGet', { login })).toEqual([]);
    const deals = h.call('DealRequest', { login });
    expect(deals.at(-1)).toMatchObject({ entry: 'Out', reason: 'Sl', price: 1.0949, profit: -410 });
    expect(h.fails('DealerSend', { login, symbol: 'EURUSD', type: 'BuyLimit', volume: 10_000, price: 1.2 }).code).toBe(
      R.ErrParams,
    );
    expect(h.fails('DealerSend', { login, symbol: 'EURUSD', type: 'Buy', volume: 150 }).code).toBe(R.ErrParams);
  });

  it('cancels a pending order placed against a position once the position is closed or deleted, and never fills it', () => {
    const { h, login, send, tick } = trader('demo\\retail');
    const first = send({});
    const second = send({});
    const closeFirst = send({ type: 'SellLimit', price: 1.11, position: first.position });
    const closeSecond = send({ type: 'SellLimit', price: 1.11, position: second.position });
    const unrelated = send({ type: 'SellLimit', price: 1.12 });
    send({ type: 'Sell', position: first.position });
    h.call('PositionDeleteBatch', { tickets: [second.position] });
    const cancelled = h.call('HistoryRequestByTickets', { tickets: [closeFirst.order, closeSecond.order] });
    expect(cancelled.map((o: { order: number; state: string }) => [o.order, o.state])).toEqual([
      [closeFirst.order, 'Canceled'],
      [closeSecond.order, 'Canceled'],
    ]);
    expect(h.call('OrderGetByTickets', { tickets: [unrelated.order] })).toHaveLength(1);
    const dealsBefore = h.call('DealRequest', { login }).length;
    tick(1.11, 1.1101);
    expect(h.call('PositionGet', { login })).toEqual([]);
    expect(h.call('DealRequest', { login })).toHaveLength(dealsBefore);
    tick(1.12, 1.1201);
    expect(h.call('PositionGet', { login })).toEqual([
      expect.objectContaining({ position: unrelated.order, action: 'Sell' }),
    ]);
  });

  it('refuses a fill without free margin and stops an account out', () => {
    const { h, login, send, tick } = trader('demo\\retail', 1500);
    expect(h.fails('DealerSend', { login, symbol: 'EURUSD', type: 'Buy', volume: 20_000 }).code).toBe(R.TradeMaxMoney);
    send({});
    tick(1.0899, 1.09);
    expect(h.call('PositionGet', { login })).toEqual([]);
    expect(h.call('DealRequest', { login }).at(-1)).toMatchObject({ reason: 'So', entry: 'Out' });
  });

  it('stops an account out by closing its most losing position first, and only as many as the level needs', () => {
    const { h, login, send, tick } = trader('demo\\retail', 3000);
    const losing = send({});
    const winning = send({ type: 'Sell', volume: 5_000 });
    // Down 500 points: the buy loses 5010, the sell gains 2495; equity 485 on 1650.07 of margin is 29% < 50%.
    tick(1.05, 1.0501);
    const stopOuts = h.call('DealRequest', { login }).filter((d: { reason: string }) => d.reason === 'So');
    expect(stopOuts).toEqual([
      expect.objectContaining({ entry: 'Out', action: 'Sell', positionID: losing.position, profit: -5010 }),
    ]);
    // Closing the loser alone brings the level back above the stop-out level, so the winner stays open.
    expect(h.call('PositionGet', { login }).map((p: { position: number }) => p.position)).toEqual([winning.position]);
    expect(h.call('UserAccountGet', { login })).toMatchObject({ balance: -2010, equity: 485, marginLevel: 92.38 });
  });

  it('stops an account out on the next tick after its leverage is cut, and not before the level is reached', () => {
    const { h, login, send, tick } = trader('demo\\retail', 10_000);
    send({});
    tick(1.1, 1.1001);
    expect(h.call('PositionGet', { login })).toHaveLength(1);
    expect(h.call('UserAccountGet', { login }).marginLevel).toBeGreaterThan(500);
    h.call('UserUpdate', { record: { login, leverage: 1 } });
    expect(h.call('PositionGet', { login })).toHaveLength(1);
    tick(1.1, 1.1001);
    expect(h.call('PositionGet', { login })).toEqual([]);
    expect(h.call('DealRequest', { login }).at(-1)).toMatchObject({ reason: 'So', entry: 'Out' });
  });

  it('keeps the margin level of every account in step with its positions through fills, closes and ticks', () => {
    const h = pf5Harness({ accounts: 40, trades: 120, orders: 0 });
    const symbols = [...new Set(h.world.positions.values().map((p) => p.symbol))];
    // Walk every traded symbol down 1% a step; no account should sit below its stop-out level with positions left.
    for (let step = 0; step < 20; step++) {
      for (const symbol of symbols) {
        const q = h.world.feed.quote(symbol)!;
        const move = -q.bid * 0.01;
        h.world.feed.inject(symbol, q.bid + move, q.ask + move);
      }
      const belowStopOut = [...h.world.users.keys()].filter((login) => {
        const state = h.world.engine.account(login);
        const stopOut = (h.world.groups.get(h.world.users.get(login)!.group)!.marginStopOut as number) ?? 50;
        return state.margin > 0 && state.marginLevel <= stopOut;
      });
      expect(belowStopOut, `step ${step}`).toEqual([]);
    }
    // The walk was steep enough to stop some accounts out.
    expect(h.world.deals.values().filter((d) => d.reason === 'So').length).toBeGreaterThan(0);
  });
});

describe('trade checks', () => {
  it('keeps stop-loss, take-profit and pending prices the stops level away from the market', () => {
    const { h, login, send } = trader('demo\\retail', 10_000);
    // EURUSD: bid 1.1, ask 1.1001, stops level 10 points of 0.00001.
    expect(
      h.fails('DealerSend', { login, symbol: 'EURUSD', type: 'Buy', volume: 10_000, priceSL: 1.09995 }).message,
    ).toBe('priceSL must be at most 1.0999 (stops level 10 points)');
    expect(
      h.fails('DealerSend', { login, symbol: 'EURUSD', type: 'Buy', volume: 10_000, priceTP: 1.10005 }).message,
    ).toBe('priceTP must be at least 1.1001 (stops level 10 points)');
    expect(
      h.fails('DealerSend', { login, symbol: 'EURUSD', type: 'Sell', volume: 10_000, priceSL: 1.10015 }).message,
    ).toBe('priceSL must be at least 1.1002 (stops level 10 points)');
    expect(
      h.fails('DealerSend', { login, symbol: 'EURUSD', type: 'BuyLimit', volume: 10_000, price: 1.10005 }).message,
    ).toContain('price must be at least 10 points from the market');
    expect(h.world.positions.values().filter((p) => p.login === login)).toEqual([]);
    const { position } = send({ priceSL: 1.0999, priceTP: 1.1001 });
    expect(h.call('PositionGetByTickets', { tickets: [position] })[0]).toMatchObject({
      priceSL: 1.0999,
      priceTP: 1.1001,
    });
    const pending = h.call('DealerSend', {
      login,
      symbol: 'EURUSD',
      type: 'BuyLimit',
      volume: 10_000,
      price: 1.09,
      priceSL: 1.0899,
    });
    expect(h.call('OrderGetByTickets', { tickets: [pending.order] })[0]).toMatchObject({
      priceOrder: 1.09,
      priceSL: 1.0899,
    });
  });

  it('refuses a pending order without the free margin it would need at its own price', () => {
    const { h, login } = trader('demo\\retail', 1000);
    h.world.feed.inject('XAUUSD', 2000, 2000.5);
    const gold = (type: string, price?: number) => ({
      login,
      symbol: 'XAUUSD',
      type,
      volume: 5_000,
      ...(price === undefined ? {} : { price }),
    });
    h.events.length = 0;
    // 0.5 lot of 100 oz at leverage 100: 2010 → 1005 of margin, more than the 1000 free; at the market bid 2000 it is 1000.
    expect(h.fails('DealerSend', gold('SellLimit', 2010))).toEqual({
      code: R.TradeMaxMoney,
      message: 'not enough money: margin 1005 exceeds free margin 1000',
    });
    expect(h.fails('DealerSend', gold('BuyStop', 2010))).toEqual({
      code: R.TradeMaxMoney,
      message: 'not enough money: margin 1005 exceeds free margin 1000',
    });
    expect(h.call('OrderGetByLogins', { logins: [login] })).toEqual([]);
    expect(h.events.filter((e) => e.kind !== 'ticks')).toEqual([]);
    const placed = h.call('DealerSend', gold('SellStop', 1990));
    expect(h.call('OrderGet', { ticket: placed.order })).toMatchObject({
      type: 'SellStop',
      priceOrder: 1990,
      volumeInitial: 5_000,
    });
    // Placed orders hold no margin: a second one the same size still fits, and so does a market sell at the bid.
    expect(h.call('DealerSend', gold('BuyLimit', 1990)).order).toBeGreaterThan(placed.order);
    expect(h.call('UserAccountGet', { login })).toMatchObject({ margin: 0, marginFree: 1000 });
    expect(h.call('DealerSend', gold('Sell')).position).toBeGreaterThan(0);
  });

  it('lets a netting account place a pending order that only reduces its position whatever its free margin', () => {
    const { h, login, send } = trader('demo\\netting', 1200);
    send({});
    const free = h.call('UserAccountGet', { login }).marginFree;
    expect(free).toBe(89.95);
    expect(h.fails('DealerSend', { login, symbol: 'EURUSD', type: 'BuyLimit', volume: 10_000, price: 1.09 })).toEqual({
      code: R.TradeMaxMoney,
      message: `not enough money: margin 1100.05 exceeds free margin ${free}`,
    });
    const reduce = h.call('DealerSend', { login, symbol: 'EURUSD', type: 'SellLimit', volume: 10_000, price: 1.11 });
    h.world.feed.inject('EURUSD', 1.11, 1.1101);
    expect(h.call('HistoryRequestByTickets', { tickets: [reduce.order] })[0]).toMatchObject({ state: 'Filled' });
    expect(h.call('PositionGet', { login })).toEqual([]);
  });

  it('follows the symbol trade mode: close-only takes only closes, long-only only buys', () => {
    const { h, login, send } = trader('demo\\netting', 10_000);
    send({});
    Object.assign(h.world.symbolRecord('EURUSD')!, { tradeMode: 'CloseOnly' });
    const refused = h.fails('DealerSend', { login, symbol: 'EURUSD', type: 'Buy', volume: 10_000 });
    expect(refused).toEqual({ code: R.TradeOrderProhibited, message: 'EURUSD: only closing orders are accepted' });
    h.call('DealerSend', { login, symbol: 'EURUSD', type: 'Sell', volume: 10_000 });
    expect(h.call('PositionGet', { login })).toEqual([]);
    Object.assign(h.world.symbolRecord('EURUSD')!, { tradeMode: 'LongOnly' });
    expect(h.fails('DealerSend', { login, symbol: 'EURUSD', type: 'Sell', volume: 10_000 }).message).toBe(
      'EURUSD: only buy orders are accepted',
    );
    expect(h.call('DealerSend', { login, symbol: 'EURUSD', type: 'Buy', volume: 10_000 }).position).toBeGreaterThan(0);
  });

  it("refuses orders outside the symbol's trade sessions for the weekday", () => {
    const { h, login } = trader('demo\\retail', 10_000);
    const sessions = Array.from({ length: 7 }, () => [{ open: 60, close: 120 }]);
    Object.assign(h.world.symbolRecord('EURUSD')!, { sessionTrade: sessions });
    const request = {
      login,
      symbol: 'EURUSD',
      type: 'Buy' as const,
      volume: 10_000,
      priceSL: 0,
      priceTP: 0,
      comment: '',
    };
    const tuesday = Date.UTC(2026, 5, 2);
    expect(() => h.world.engine.send(request, tuesday + 30 * 60_000)).toThrow(
      'EURUSD: the market is closed (trade sessions of Tuesday)',
    );
    expect(() => h.world.engine.send(request, tuesday + 120 * 60_000)).toThrow('market is closed');
    expect(h.world.engine.send(request, tuesday + 90 * 60_000).position).toBeGreaterThan(0);
  });
});

describe('rollover', () => {
  it('charges each open position its swap, three days on the triple-swap weekday, and reports the change', () => {
    const { h, login, send } = trader('demo\\retail', 10_000);
    const { position } = send({});
    const symbol = h.call('SymbolGet', { symbol: 'EURUSD' });
    // One lot long at -2.5 points: 2.5 × 0.00001 × 100000 = 2.50 USD a day.
    const perDay = symbol.swapLong * symbol.point * symbol.contractSize;
    expect(perDay).toBeCloseTo(-2.5, 6);
    const tuesday = Date.UTC(2026, 5, 2);
    const wednesday = Date.UTC(2026, 5, 3);
    h.events.length = 0;
    expect(h.world.rollover(tuesday)).toBe(h.world.positions.size);
    expect(h.call('PositionGetByTickets', { tickets: [position] })[0].storage).toBe(-2.5);
    h.world.rollover(wednesday);
    expect(h.call('PositionGetByTickets', { tickets: [position] })[0].storage).toBe(-10);
    expect(
      h.events.some(
        (e) =>
          e.kind === 'positions' && e.op === 'update' && e.record.position === position && e.record.storage === -2.5,
      ),
    ).toBe(true);
    // Swaps count in equity: the account's equity fell by what was charged.
    const account = h.call('UserAccountGet', { login });
    expect(account.storage).toBe(-10);
  });

  it("charges nothing when the symbol's swaps are disabled", () => {
    const { h, send } = trader('demo\\retail', 10_000);
    const { position } = send({});
    h.call('SymbolRecord', { symbol: 'EURUSD', patch: { swapMode: 'Disabled' } });
    h.world.rollover(Date.UTC(2026, 5, 2));
    expect(h.call('PositionGetByTickets', { tickets: [position] })[0].storage).toBe(0);
  });
});

describe('deletes', () => {
  it("deletes positions, orders and deals only when every ticket exists and is this server's", () => {
    const h = pf5Harness({ accounts: 50, trades: 100 });
    const positions = h.world.positions.values();
    const foreign = positions.find((p) => h.world.foreignTickets.has(p.position))!;
    const own = positions
      .filter((p) => !h.world.foreignTickets.has(p.position))
      .slice(0, 2)
      .map((p) => p.position);
    expect(foreign.externalId).toBe(`TS2:${foreign.position}`);
    expect(h.fails('PositionDeleteBatch', { tickets: [...own, foreign.position] })).toEqual({
      code: R.ErrNotMain,
      message: `position ${foreign.position} was created on another trade server`,
    });
    expect(R.ErrNotMain).toBe(18);
    expect(h.fails('PositionDeleteBatch', { tickets: [...own, 1] }).code).toBe(R.ErrNotfound);
    expect(h.call('PositionGetByTickets', { tickets: own })).toHaveLength(2);
    const deals = h.world.deals.size;
    expect(h.call('PositionDeleteBatch', { tickets: own })).toBe(true);
    expect(h.call('PositionGetByTickets', { tickets: own })).toEqual([]);
    expect(h.world.deals.size).toBe(deals);
    const deal = h.world.deals.values().find((d) => d.action === 'Balance')!;
    const balance = h.world.users.get(deal.login)!.balance;
    expect(h.call('DealDeleteBatch', { tickets: [deal.deal] })).toBe(true);
    expect(h.world.users.get(deal.login)!.balance).toBe(balance);
    const order = h.world.orders.values().find((o) => !h.world.foreignTickets.has(o.order))!;
    expect(h.call('OrderDeleteBatch', { tickets: [order.order] })).toBe(true);
    expect(h.events.filter((e) => e.op === 'delete').map((e) => e.kind)).toEqual([
      'positions',
      'positions',
      'deals',
      'orders',
    ]);
  });
});

describe('groups, symbols and bars', () => {
  it('patches a group but refuses the unimplemented setters', () => {
    const h = pf5Harness();
    const group = h.call('GroupRecord', { group: 'real\\retail', patch: { marginCall: 80, companyPage: null } });
    records.PF5ConGroup.parse(group);
    expect(group.marginCall).toBe(80);
    expect('companyPage' in group).toBe(false);
    expect(group.commissions.standard.tiers[0].value).toBe(3.5);
    expect(h.fails('GroupRecord', { group: 'real\\retail', patch: { commissions: {} } }).code).toBe(R.ErrParams);
    expect(h.fails('GroupRecord', { group: 'real\\retail', patch: { newsLang: [1] } }).code).toBe(R.ErrParams);
    // null removes a member of a group, but never the group's name.
    expect(h.fails('GroupRecord', { group: 'real\\retail', patch: { companyEmail: null, group: null } })).toEqual({
      code: R.ErrParams,
      message: 'patch.group is required and cannot be removed',
    });
    expect(h.call('GroupGet', { group: 'real\\retail' }).companyEmail).toBe('office@example.com');
  });

  it('updates only the accepted symbol fields and refuses read-only ones in a patch', () => {
    const h = pf5Harness();
    const updated = h.call('SymbolUpdate', { symbol: 'EURUSD', record: { stopsLevel: 30, digits: 2, color: 255 } });
    expect(updated).toMatchObject({ stopsLevel: 30, digits: 5, color: 255 });
    expect(h.call('SymbolRecord', { symbol: 'EURUSD', patch: { description: 'Euro' } }).description).toBe('Euro');
    expect(h.fails('SymbolRecord', { symbol: 'EURUSD', patch: { multiply: 10 } }).code).toBe(R.ErrParams);
    expect(h.fails('SymbolRecord', { symbol: 'EURUSD', patch: { sessionQuote: [] } }).code).toBe(R.ErrParams);
    expect(h.fails('SymbolRecord', { symbol: 'EURUSD', patch: { description: null, symbol: null } })).toEqual({
      code: R.ErrParams,
      message: 'patch.symbol is required and cannot be removed',
    });
    expect(h.call('SymbolGet', { symbol: 'EURUSD' }).description).toBe('Euro');
    expect('sector' in h.call('SymbolRecord', { symbol: 'EURUSD', patch: { sector: null } })).toBe(false);
    // Fields dealing and valuation read can change but not disappear; nothing of a refused patch is applied.
    for (const field of ['volumeMin', 'point', 'contractSize', 'swapLong']) {
      expect(h.fails('SymbolRecord', { symbol: 'EURUSD', patch: { description: 'Gone', [field]: null } })).toEqual({
        code: R.ErrParams,
        message: `patch.${field} is required and cannot be removed`,
      });
    }
    expect(h.call('SymbolGet', { symbol: 'EURUSD' })).toMatchObject({ description: 'Euro', volumeMin: 100 });
    expect(h.fails('GroupRecord', { group: 'real\\retail', patch: { marginStopOut: null } }).message).toBe(
      'patch.marginStopOut is required and cannot be removed',
    );
    const symbol = h.call('SymbolGet', { symbol: 'EURUSD' });
    records.PF5Symbol.parse(symbol);
    expect(symbol.sessionTrade).toHaveLength(7);
    expect(h.call('SymbolRequestArray', { mask: 'Forex\\*' }).length).toBeGreaterThan(5);
  });

  it('answers symbols with the settings of the group asked for, and the base settings without one', () => {
    const { h, send } = trader('demo\\netting', 10_000);
    const { position } = send({});
    const base = h.call('SymbolRequestArray', { mask: 'Forex\\*' });
    const names = base.map((s: { symbol: string }) => s.symbol);
    expect(names).toContain('EURUSD');
    expect(base.every((s: { swapMode: string }) => s.swapMode === 'ByPoints')).toBe(true);
    // A group charged swaps trades the base settings; null asks for the base settings.
    expect(h.call('SymbolRequestArray', { mask: 'Forex\\*', group: 'demo\\netting' })).toEqual(base);
    expect(h.call('SymbolRequestArray', { mask: 'Forex\\*', group: null })).toEqual(base);
    h.call('GroupRecord', { group: 'demo\\netting', patch: { tradeFlags: 'Trailing, Expiration' } });
    const netting = h.call('SymbolRequestArray', { mask: 'Forex\\*', group: 'demo\\netting' });
    expect(netting).toEqual(base.map((s: Record<string, unknown>) => ({ ...s, swapMode: 'Disabled' })));
    for (const s of netting) records.PF5Symbol.parse(s);
    expect(h.call('SymbolRequestArray', { mask: 'Forex\\*', group: 'demo\\retail' })).toEqual(base);
    expect(h.call('SymbolRequestArray', { mask: 'Forex\\*' })).toEqual(base);
    expect(h.call('SymbolGet', { symbol: 'EURUSD' }).swapMode).toBe('ByPoints');
    // The group's accounts are charged what the group's symbols show: no swap.
    h.world.rollover(Date.UTC(2026, 5, 2));
    expect(h.call('PositionGetByTickets', { tickets: [position] })[0].storage).toBe(0);
    h.call('GroupRecord', { group: 'demo\\netting', patch: { tradeFlags: 'All' } });
    expect(h.call('SymbolRequestArray', { mask: 'EURUSD', group: 'demo\\netting' })).toEqual([
      h.call('SymbolGet', { symbol: 'EURUSD' }),
    ]);
    h.world.rollover(Date.UTC(2026, 5, 2));
    expect(h.call('PositionGetByTickets', { tickets: [position] })[0].storage).toBe(-2.5);
    expect(h.fails('SymbolRequestArray', { mask: '*', group: 'nope' })).toEqual({
      code: R.ErrNotfound,
      message: 'group nope not found',
    });
  });

  it('answers minute bars with tick volume and the lowest spread', () => {
    const h = pf5Harness();
    const t = Date.parse('2026-01-06T10:00:00Z');
    h.world.feed.inject('EURUSD', 1.1, 1.1002, t + 1000);
    h.world.feed.inject('EURUSD', 1.1004, 1.1005, t + 2000);
    h.world.feed.inject('EURUSD', 1.1001, 1.1002, t + 61_000);
    const bars = h.call('ChartRequest', {
      symbol: 'EURUSD',
      fromTime: '2026-01-06T00:00:00Z',
      toTime: '2026-01-07T00:00:00Z',
    });
    expect(bars[0]).toEqual({
      dateTime: '2026-01-06T10:00:00.000Z',
      open: 1.1,
      high: 1.1004,
      low: 1.1,
      close: 1.1004,
      tickVolume: 2,
      spread: 10,
      volume: 0,
    });
    expect(bars).toHaveLength(2);
  });

  it('tells the manager who it is', () => {
    const h = pf5Harness();
    const me = h.call('ManagerCurrent', {}, ['Admin', 'AccRead']);
    records.PF5ConManager.parse(me);
    expect(me).toMatchObject({ login: 1000, right: ['Admin', 'AccRead'] });
  });
});
