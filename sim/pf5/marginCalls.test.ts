/**
 * Margin-call events of the PF5 engine: an account whose margin level goes at or below its group's `marginCall` or
 * `marginStopOut` level is announced as entering it, and as leaving it when it comes back above, whatever moved the
 * level (ticks, a leverage change, a group's new levels, deposits, fills, a stop-out's closes). The stop-out is
 * announced before the closes it causes. After every change the announced state is the one the exact level gives.
 */
import { describe, expect, it } from 'vitest';
import { pf5Harness, type Harness } from '../../test/support/sim/worldHarness.js';
import type { Pf5World } from './pf5World.js';

type Event = { kind: string; op: string; record: Record<string, any> };

/** The state the exact margin level gives against the account's group levels. */
function exactState(world: Pf5World, login: number): string {
  const account = world.engine.account(login);
  const group = world.groups.get(world.users.get(login)!.group)!;
  if (account.margin <= 0) return 'Ok';
  if (account.marginLevel <= (group.marginStopOut as number)) return 'StopOut';
  return account.marginLevel <= (group.marginCall as number) ? 'MarginCall' : 'Ok';
}

function trader() {
  // No generated positions: only the test's account can cross a level.
  const h = pf5Harness({ accounts: 10, trades: 0, orders: 0 });
  h.world.feed.inject('EURUSD', 1.1, 1.1001);
  const login = h.call('UserAdd', { record: { group: 'demo\\retail', leverage: 100, firstName: 'Mona' } })
    .login as number;
  h.call('DealerBalance', { login, type: 'Balance', amount: 2_000 });
  h.events.length = 0;
  return { h, login };
}

const margins = (events: Event[]) => events.filter((e) => e.kind === 'margin').map((e) => e.record);
const crossings = (events: Event[]) => margins(events).map((r) => `${r.type} ${r.direction}`);

/** Moves EURUSD's bid by `step` until `done`, checking after each tick that the announced state is the exact one. */
function walk(h: Harness<Pf5World>, login: number, step: number, done: () => boolean): void {
  for (let i = 0; i < 2_000 && !done(); i++) {
    const q = h.world.feed.quote('EURUSD')!;
    h.world.feed.inject('EURUSD', q.bid + step, q.ask + step);
    expect(h.world.engine.marginStateOf(login), `at bid ${q.bid + step}`).toBe(exactState(h.world, login));
  }
  expect(done()).toBe(true);
}

describe('PF5 margin-call events', () => {
  it('announce entering and leaving the margin call as ticks move the level, with the figures at the crossing', () => {
    const { h, login } = trader();
    h.call('DealerSend', { login, symbol: 'EURUSD', type: 'Buy', volume: 10_000 });
    expect(h.world.engine.account(login).marginLevel).toBeGreaterThan(150);
    expect(margins(h.events)).toEqual([]);
    h.events.length = 0;

    walk(h, login, -0.0002, () => h.world.engine.account(login).marginLevel <= 100);
    const entered = margins(h.events);
    expect(entered.map((r) => `${r.type} ${r.direction}`)).toEqual(['MarginCall Enter']);
    const account = h.world.engine.account(login);
    expect(entered[0]).toEqual({
      login,
      group: 'demo\\retail',
      type: 'MarginCall',
      direction: 'Enter',
      time: expect.any(String),
      marginLevel: account.marginLevel,
      equity: account.equity,
      margin: account.margin,
    });
    expect(account.marginLevel).toBeGreaterThan(50);
    expect(h.events.filter((e) => e.kind === 'margin').every((e) => e.op === 'add')).toBe(true);
    h.events.length = 0;

    walk(h, login, 0.0002, () => h.world.engine.account(login).marginLevel > 100);
    expect(crossings(h.events)).toEqual(['MarginCall Leave']);
    expect(margins(h.events)[0].marginLevel).toBeGreaterThan(100);
  });

  it("follow a leverage change, a deposit and a group's new levels, and a stop-out is announced before its closes", () => {
    const { h, login } = trader();
    h.call('DealerSend', { login, symbol: 'EURUSD', type: 'Buy', volume: 10_000 });
    h.events.length = 0;

    // Half the leverage doubles the margin: about 90%, in margin call but above the stop-out.
    h.call('UserUpdate', { record: { login, leverage: 50 } });
    expect(h.events.map((e) => e.kind)).toEqual(['users', 'margin']);
    expect(crossings(h.events)).toEqual(['MarginCall Enter']);
    h.events.length = 0;

    h.call('DealerBalance', { login, type: 'Balance', amount: 1_000 });
    expect(h.events.map((e) => e.kind)).toEqual(['deals', 'users', 'margin']);
    expect(crossings(h.events)).toEqual(['MarginCall Leave']);
    h.events.length = 0;

    h.call('GroupRecord', { group: 'demo\\retail', patch: { marginCall: 200 } });
    expect(crossings(h.events)).toEqual(['MarginCall Enter']);
    h.call('GroupRecord', { group: 'demo\\retail', patch: { marginCall: 100 } });
    expect(crossings(h.events)).toEqual(['MarginCall Enter', 'MarginCall Leave']);
    h.events.length = 0;

    // A fall past both levels in one tick: both entered, then the stop-out closes, then both left.
    const q = h.world.feed.quote('EURUSD')!;
    h.world.feed.inject('EURUSD', q.bid - 0.05, q.ask - 0.05);
    const kinds = h.events
      .filter((e) => e.kind !== 'ticks')
      .map((e) => (e.kind === 'margin' ? `${e.record.type} ${e.record.direction}` : e.kind));
    const firstClose = kinds.findIndex((k) => k === 'deals' || k === 'positions');
    expect(firstClose).toBeGreaterThan(0);
    expect(kinds.slice(0, firstClose)).toEqual(['MarginCall Enter', 'StopOut Enter']);
    expect(kinds.slice(-2)).toEqual(['StopOut Leave', 'MarginCall Leave']);
    expect(h.world.deals.values().filter((d) => d.login === login && d.reason === 'So').length).toBe(1);
    const stopOut = margins(h.events).find((r) => r.type === 'StopOut' && r.direction === 'Enter')!;
    expect(stopOut.marginLevel).toBeLessThanOrEqual(50);
    expect(h.world.engine.marginStateOf(login)).toBe('Ok');
  });

  it("keep every account's announced state on its exact level through a market walk down and back", () => {
    const h = pf5Harness({ accounts: 40, trades: 120, orders: 0 });
    const symbols = [...new Set(h.world.positions.values().map((p) => p.symbol))];
    const logins = [...h.world.users.keys()];
    const check = (when: string) => {
      for (const login of logins)
        expect(h.world.engine.marginStateOf(login), `${when} login ${login}`).toBe(exactState(h.world, login));
    };
    check('start');
    for (const direction of [-1, 1]) {
      for (let step = 0; step < 12; step++) {
        for (const symbol of symbols) {
          const q = h.world.feed.quote(symbol)!;
          const move = direction * q.bid * 0.005;
          h.world.feed.inject(symbol, q.bid + move, q.ask + move);
        }
        check(`${direction < 0 ? 'down' : 'up'} step ${step}`);
      }
    }
    const announced = margins(h.events);
    expect(announced.filter((r) => r.direction === 'Enter' && r.type === 'MarginCall').length).toBeGreaterThan(0);
    // Every leave follows an enter of the same level by the same account.
    const open = new Set<string>();
    for (const r of announced) {
      const key = `${r.login} ${r.type}`;
      if (r.direction === 'Enter') {
        expect(open.has(key), key).toBe(false);
        open.add(key);
      } else {
        expect(open.delete(key), key).toBe(true);
      }
    }
  });
});
