/**
 * A small PF5 world for the query tests, built by hand so every record is known: five accounts in five groups
 * (`demo\vip` is a copy of `demo\retail` added for exclusion masks), a deposit each, six market fills and five
 * pending orders, all at fixed times one minute apart. Nothing is generated.
 */
import { pf5Harness, type Harness } from './worldHarness.js';
import { iso } from '../../../sim/world/people.js';
import type { PF5OrderType } from '../../../sim/pf5/pf5Records.js';
import type { Pf5World } from '../../../sim/pf5/pf5World.js';

/** Monday 5 January 2026, 09:00 UTC; minute `m` of the fixture is `at(m)`. */
export const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
export const at = (minute: number) => T0 + minute * 60_000;
export const isoAt = (minute: number) => iso(at(minute));

export type Who = 'retail' | 'netting' | 'vip' | 'real' | 'pro';
export const GROUP_OF: Record<Who, string> = {
  retail: 'demo\\retail',
  netting: 'demo\\netting',
  vip: 'demo\\vip',
  real: 'real\\retail',
  pro: 'real\\pro',
};

export interface Desk {
  h: Harness<Pf5World>;
  login: Record<Who, number>;
  /** Open positions by name (hedging: the ticket of the order that opened it). */
  position: Record<'retailEur' | 'nettingGbp' | 'vipEur' | 'realXau' | 'proEur' | 'retailXau', number>;
  /** Pending orders by name. */
  order: Record<'retailEur' | 'nettingEur' | 'vipGbp' | 'realEur' | 'proXau', number>;
  /** The filled market orders (history), in fill order. */
  filled: number[];
  /** Deposit deals by account, and the fill deals by position name. */
  deposit: Record<Who, number>;
  fill: Record<'retailEur' | 'nettingGbp' | 'vipEur' | 'realXau' | 'proEur' | 'retailXau', number>;
}

export function desk(): Desk {
  const h = pf5Harness({ accounts: 0, trades: 0, orders: 0 });
  h.world.groups.set('demo\\vip', { ...h.world.groups.get('demo\\retail')!, group: 'demo\\vip' });
  h.world.feed.inject('EURUSD', 1.1, 1.1001, T0);
  h.world.feed.inject('GBPUSD', 1.25, 1.2502, T0);
  h.world.feed.inject('XAUUSD', 2000, 2000.5, T0);
  const names: Who[] = ['retail', 'netting', 'vip', 'real', 'pro'];
  const login = {} as Record<Who, number>;
  for (const who of names) {
    login[who] = h.call('UserAdd', { record: { group: GROUP_OF[who], leverage: 100, firstName: who } }).login;
  }
  const deposit = {} as Record<Who, number>;
  names.forEach((who, i) => {
    deposit[who] = h.world.engine.balance(login[who], 'Balance', 100_000, 'deposit', at(i)).deal;
  });
  const send = (who: Who, symbol: string, type: PF5OrderType, minute: number, price?: number) =>
    h.world.engine.send(
      { login: login[who], symbol, type, volume: 10_000, price, priceSL: 0, priceTP: 0, comment: '' },
      at(minute),
    );
  const fills = {
    retailEur: send('retail', 'EURUSD', 'Buy', 10),
    nettingGbp: send('netting', 'GBPUSD', 'Sell', 11),
    vipEur: send('vip', 'EURUSD', 'Buy', 12),
    realXau: send('real', 'XAUUSD', 'Buy', 13),
    proEur: send('pro', 'EURUSD', 'Sell', 14),
    retailXau: send('retail', 'XAUUSD', 'Sell', 15),
  };
  const order = {
    retailEur: send('retail', 'EURUSD', 'BuyLimit', 20, 1.09).order,
    nettingEur: send('netting', 'EURUSD', 'SellLimit', 21, 1.11).order,
    vipGbp: send('vip', 'GBPUSD', 'BuyLimit', 22, 1.24).order,
    realEur: send('real', 'EURUSD', 'BuyStop', 23, 1.11).order,
    proXau: send('pro', 'XAUUSD', 'SellStop', 24, 1990).order,
  };
  const position = Object.fromEntries(
    Object.entries(fills).map(([k, r]) => [k, r.position as number]),
  ) as Desk['position'];
  const fill = Object.fromEntries(Object.entries(fills).map(([k, r]) => [k, r.deal as number])) as Desk['fill'];
  return { h, login, position, order, filled: Object.values(fills).map((r) => r.order), deposit, fill };
}

/** The key field of each record, for comparing selections. */
export const tickets = (
  records: Array<{ position?: number; order?: number; deal?: number; login?: number }>,
  key: 'position' | 'order' | 'deal' | 'login',
) => records.map((r) => r[key]);
