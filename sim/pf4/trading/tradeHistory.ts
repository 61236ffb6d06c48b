/**
 * The history of closed trades and balance and credit entries, per account and by ticket, and the balance check
 * behind AdmBalanceCheck and AdmBalanceFix: the balance an account's history explains against the one it records.
 */
import { cents } from '../../world/people.js';
import type { PF4TradeRecord } from '../pf4Records.js';
import type { Pf4World } from '../pf4World.js';
import type { MarginLevels } from './marginLevels.js';
import { requireUser } from './tradeChecks.js';
import { journalTrade } from './tradeJournal.js';

export class TradeHistory {
  private readonly byLogin = new Map<number, PF4TradeRecord[]>();
  private readonly byOrder = new Map<number, PF4TradeRecord>();
  private entries = 0;

  constructor(
    private readonly world: Pf4World,
    private readonly margins: MarginLevels,
  ) {}

  /** Entries in the history, every account's. */
  get count(): number {
    return this.entries;
  }

  /** Appends a closed trade or a balance/credit entry (generation, closes, restores). */
  add(record: PF4TradeRecord): void {
    let list = this.byLogin.get(record.login);
    if (!list) this.byLogin.set(record.login, (list = []));
    list.push(record);
    this.byOrder.set(record.order, record);
    this.entries++;
  }

  /** Takes an entry out again (a rolled-back close). */
  remove(record: PF4TradeRecord): void {
    const list = this.byLogin.get(record.login);
    const at = list ? list.indexOf(record) : -1;
    if (list && at >= 0) list.splice(at, 1);
    this.byOrder.delete(record.order);
    this.entries--;
  }

  record(order: number): PF4TradeRecord | undefined {
    return this.byOrder.get(order);
  }

  /** Closed trades and balance entries of an account with close time in [from, to], oldest first. */
  of(login: number, from = 0, to = Number.MAX_SAFE_INTEGER): PF4TradeRecord[] {
    const list = this.byLogin.get(login) ?? [];
    return list
      .filter((r) => {
        const t = Date.parse(r.closeTime ?? r.openTime);
        return t >= from && t <= to;
      })
      .sort(
        (a, b) => Date.parse(a.closeTime ?? a.openTime) - Date.parse(b.closeTime ?? b.openTime) || a.order - b.order,
      );
  }

  /** The balance the history explains: every entry but credit and deleted trades. */
  recomputedBalance(login: number): number {
    let sum = 0;
    for (const r of this.byLogin.get(login) ?? []) {
      if (r.tradeCommand === 'Credit' || r.tradeRecordState === 'Deleted') continue;
      sum += r.profit + r.commission + r.storage + r.taxes;
    }
    return cents(sum);
  }

  /** Recorded balance minus the balance the history explains; 0 means intact. */
  balanceDiff(login: number): number {
    const user = requireUser(this.world, login);
    return cents(user.balance - this.recomputedBalance(login));
  }

  /** Writes the recomputed balance to the account; answers the difference it removed. */
  fixBalance(login: number): number {
    const diff = this.balanceDiff(login);
    if (diff !== 0) {
      const user = requireUser(this.world, login);
      this.world.replaceUser({ ...user, balance: cents(user.balance - diff) });
      journalTrade(this.world, `balance of ${login} fixed by ${-diff}`);
      this.margins.accountChanged(login);
    }
    return diff;
  }
}
