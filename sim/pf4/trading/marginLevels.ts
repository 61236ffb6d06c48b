/**
 * Margin: what a trade holds (fixed at its open price by the symbol's calculation mode, the group's divider and the
 * account's leverage), an account's margin level computed afresh from its trades and the current quotes, and what the
 * broker is told of it: the level of every account with open trades or orders, again whenever its figures change, and
 * a delete when its last trade or order has gone.
 */
import { toUsd } from '../../feed/valuation.js';
import { cents } from '../../world/people.js';
import { isPending, type PF4TradeRow, type PF4UserRecord } from '../pf4Records.js';
import type { Pf4World } from '../pf4World.js';
import { requireUser } from './tradeChecks.js';
import type { TradeBook } from './tradeBook.js';

export type MarginLevelType = 'Ok' | 'MarginCall' | 'StopOut';

export interface PF4MarginLevelRecord {
  login: number;
  group: string;
  leverage: number;
  updated: number;
  balance: number;
  equity: number;
  volume: number;
  margin: number;
  free: number;
  level: number;
  controllingType: 'Percent' | 'Currency';
  levelType: MarginLevelType;
}

/** The level type of a margin level in percent against the group's stop-out and margin-call levels. */
export function levelTypeOf(level: number, stopout: number, call: number): MarginLevelType {
  return level <= stopout ? 'StopOut' : level <= call ? 'MarginCall' : 'Ok';
}

/** The margin a trade holds, in USD, at its open price. Pending orders hold none. */
export function requiredMargin(
  world: Pf4World,
  row: Pick<PF4TradeRow, 'symbol' | 'tradeCommand' | 'volume' | 'openPrice'>,
  user: PF4UserRecord,
): number {
  if (isPending(row.tradeCommand)) return 0;
  const instrument = world.instrumentBySymbol.get(row.symbol);
  const config = world.symbolConfig(row.symbol);
  if (!instrument || !config) return 0;
  const lots = row.volume / 100;
  const leverage = Math.max(1, user.leverage);
  const mode = config.marginCalculationMode as string;
  const contract = (config.contractSize as number) ?? instrument.contractSize;
  let amount: number;
  let currency: string;
  if (mode === 'Forex') {
    amount = (lots * contract) / leverage;
    currency = (config.marginCurrency as string) || instrument.marginCurrency;
  } else if (mode === 'Futures') {
    amount = lots * ((config.marginInitial as number) || (contract * row.openPrice) / leverage);
    currency = (config.currency as string) || instrument.profitCurrency;
  } else {
    // CFDs are margined on leverage here (CFD-leverage style) so demo accounts hold sensible margins.
    amount = (lots * contract * row.openPrice) / leverage;
    currency = (config.currency as string) || instrument.profitCurrency;
  }
  amount *= ((config.percentage as number) ?? 100) / 100;
  const override = world.groupMargins.get(user.group)?.find((m) => m.symbol === row.symbol);
  const divider = override?.marginDivider || (config.marginDivider as number) || 1;
  return cents(toUsd(amount / divider, currency, (s) => world.feed.quote(s)));
}

export class MarginLevels {
  /** Logins a broker holds a margin level for: those with open trades or orders, as the resync and events tell it. */
  private readonly announced = new Set<number>();

  constructor(
    private readonly world: Pf4World,
    private readonly book: TradeBook,
  ) {}

  /** The generated trades are in the book: every login with one has its level in the resync. */
  indexed(): void {
    for (const login of this.book.loginsWithTrades()) this.announced.add(login);
  }

  /** The margin level of an account computed afresh from its trades and the current quotes. */
  level(login: number): PF4MarginLevelRecord {
    const user = requireUser(this.world, login);
    const group = this.world.groups.find(user.group);
    let margin = 0;
    let floating = 0;
    let volume = 0;
    for (const order of this.book.ordersOf(login) ?? []) {
      const row = this.world.trades.get(order);
      if (!row || isPending(row.tradeCommand)) continue;
      margin += this.book.slot(order)?.margin ?? 0;
      floating += this.book.currentResult(row);
      volume += row.volume;
    }
    const equity = cents(user.balance + user.credit + floating);
    margin = cents(margin);
    const level = margin > 0 ? cents((equity / margin) * 100) : 0;
    const stopout = group?.marginStopout ?? 50;
    const call = group?.marginCall ?? 100;
    return {
      login,
      group: user.group,
      leverage: user.leverage,
      updated: Math.floor(Date.now() / 1000),
      balance: user.balance,
      equity,
      volume,
      margin,
      free: cents(equity - margin),
      level,
      controllingType: group?.marginControllingType ?? 'Percent',
      levelType: margin <= 0 ? 'Ok' : levelTypeOf(level, stopout, call),
    };
  }

  /**
   * Re-evaluates an account after a change of its trades or balance and tells the broker its margin: the level while
   * the account has open trades or orders, a delete when its last one has gone.
   */
  accountChanged(login: number): void {
    if (!this.world.users.has(login)) return;
    if (!this.book.ordersOf(login)) {
      if (this.announced.delete(login)) this.world.emit('margin', 'delete', { login });
      return;
    }
    const level = this.level(login);
    const account = this.book.accountOf(login);
    if (account) {
      account.levelType = level.levelType;
      this.book.reanchor(account);
    }
    this.announce(level);
  }

  announce(level: PF4MarginLevelRecord): void {
    this.announced.add(level.login);
    this.world.emit('margin', 'update', level);
  }

  /**
   * A group's levels changed: accounts of the group with trades pick them up, and the broker learns the margin level of
   * each account whose level type the new levels change. A stop-out it now calls for happens on the next tick.
   */
  onGroupChanged(group: string): void {
    for (const state of this.book.accounts()) {
      const user = this.world.users.get(state.login);
      if (user?.group !== group) continue;
      this.book.onUserChanged(user);
      const level = this.level(state.login);
      if (level.levelType !== state.levelType) {
        state.levelType = level.levelType;
        this.announce(level);
      }
    }
  }

  /** A manager edited an account: when a figure of its margin record changed, the broker gets the new level. */
  onAccountEdited(before: PF4UserRecord, after: PF4UserRecord): void {
    if (
      before.balance !== after.balance ||
      before.credit !== after.credit ||
      before.leverage !== after.leverage ||
      before.group !== after.group
    ) {
      this.accountChanged(after.login);
    }
  }
}
