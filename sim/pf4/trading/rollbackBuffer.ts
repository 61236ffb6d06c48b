/**
 * The rollback buffer behind TradeClearRollback: an automatic activation (a pending order, a stop loss, a take profit,
 * a stop-out) is held for the server's rollback time; until it commits a dealer can undo it, which restores the trade
 * as it was (marked as rolled back, so the triggers leave it to the dealer) and, for a close, the balance and history.
 */
import { PF4_RESULT } from '../../../shared/resultCodes.js';
import { CommandError } from '../../world/commandError.js';
import { cents, iso } from '../../world/people.js';
import type { PF4ActivationType, PF4TradeRecord, PF4TradeRow } from '../pf4Records.js';
import type { Pf4World } from '../pf4World.js';
import type { MarginLevels } from './marginLevels.js';
import type { TradeBook } from './tradeBook.js';
import { requireUser } from './tradeChecks.js';
import type { TradeHistory } from './tradeHistory.js';
import { journalTrade } from './tradeJournal.js';

/** An automatic activation held until it commits. */
export interface RollbackEntry {
  order: number;
  kind: 'Pending' | 'SL' | 'TP' | 'Stopout';
  before: PF4TradeRow;
  /** For closes: the history record it wrote and what it added to the balance. */
  closed?: PF4TradeRecord;
  balanceDelta: number;
  commitsAt: number;
}

export class RollbackBuffer {
  private readonly held = new Map<number, RollbackEntry>();

  constructor(
    private readonly world: Pf4World,
    private readonly book: TradeBook,
    private readonly margins: MarginLevels,
    private readonly history: TradeHistory,
    private readonly rollbackMs: number,
  ) {}

  /** Holds an activation for the rollback time; with a rollback time of 0 nothing is held. */
  hold(entry: Omit<RollbackEntry, 'commitsAt'>, now: number): void {
    if (this.rollbackMs > 0) this.held.set(entry.order, { ...entry, commitsAt: now + this.rollbackMs });
  }

  /** Commits the held activations whose time has come. */
  commitDue(now: number): void {
    for (const [order, entry] of this.held) if (entry.commitsAt <= now) this.held.delete(order);
  }

  /**
   * Undoes an activation still held. Answers false when the ticket is known but nothing is held for it (already
   * committed or rolled back: harmless); throws for a ticket the server never had.
   */
  clear(order: number, now: number): boolean {
    const entry = this.held.get(order);
    if (!entry || entry.commitsAt <= now) {
      if (entry) this.held.delete(order);
      if (this.world.trades.has(order) || this.history.record(order)) return false;
      throw new CommandError(PF4_RESULT.InvalidData, `order ${order} not found`);
    }
    this.held.delete(order);
    const kind = `${entry.kind === 'Stopout' ? 'StopOut' : entry.kind}Rollback` as PF4ActivationType;
    const restored: PF4TradeRow = { ...entry.before, activationType: kind, timeStamp: iso(now) };
    if (entry.closed) {
      this.history.remove(entry.closed);
      const user = requireUser(this.world, entry.before.login);
      this.world.replaceUser({ ...user, balance: cents(user.balance - entry.balanceDelta) });
      this.book.add(restored);
    } else {
      this.book.replace(restored, true);
    }
    journalTrade(this.world, `'${entry.before.login}': ${entry.kind} activation of #${order} rolled back`);
    this.margins.accountChanged(entry.before.login);
    return true;
  }
}
