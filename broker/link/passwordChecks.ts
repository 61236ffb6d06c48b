/**
 * The bound on failed password checks: at most `failures` failed checks of one account (trade platform and login)
 * within a sliding window of `windowMs`. The broker is the one place that sees every check of a platform, whichever
 * edge isolate sent it, and the trading server's answer to it, so the bound holds across the whole edge.
 *
 * Invariants:
 * - A check is admitted only while the account's failures in the window plus its checks still in flight are below the
 *   bound: concurrent guesses cannot pass it by all being sent before the first answer comes back.
 * - A refused check is never sent to the trading server; the refusal says how many seconds until a check may pass.
 * - A success does not clear the failures before it: the broker cannot tell the account's owner from whoever else
 *   checks the same login, so a reset would give a guesser a fresh budget after each of the owner's checks. Failures
 *   age out of the window by themselves, so the owner waits at most one window.
 * - Memory is bounded by the accounts checked within a window: an account holds at most `failures` times, and
 *   accounts with nothing in flight and no failure left in the window are dropped (swept once per window).
 */

export interface PasswordCheckLimit {
  /** Failed checks of one account allowed per window; 0 turns the bound off. */
  failures: number;
  windowMs: number;
}

export const DEFAULT_PASSWORD_CHECK_LIMIT: PasswordCheckLimit = { failures: 5, windowMs: 60_000 };

/** An admitted check: `settle` once with whether the trading server answered that the login or password is wrong. */
export interface AdmittedCheck {
  ok: true;
  settle(failed: boolean): void;
}

export interface RefusedCheck {
  ok: false;
  retryAfterSeconds: number;
}

interface Account {
  /** Times of the failed checks still in the window, oldest first (at most `failures`). */
  failed: number[];
  /** Admitted checks not settled yet. */
  inFlight: number;
}

const NOTHING_TO_SETTLE: AdmittedCheck = { ok: true, settle: () => {} };

export class PasswordChecks {
  private readonly accounts = new Map<string, Account>();
  private lastSweep: number;

  constructor(
    readonly limit: PasswordCheckLimit = DEFAULT_PASSWORD_CHECK_LIMIT,
    private readonly now: () => number = Date.now,
  ) {
    if (!Number.isSafeInteger(limit.failures) || limit.failures < 0)
      throw new Error(`password check failures must be a whole number from 0, got ${limit.failures}`);
    if (!Number.isSafeInteger(limit.windowMs) || limit.windowMs < 1)
      throw new Error(`password check window must be at least 1 ms, got ${limit.windowMs}`);
    this.lastSweep = now();
  }

  /** Accounts with a failure in the window or a check in flight (for tests and metrics). */
  get size(): number {
    return this.accounts.size;
  }

  /** Admits a check of `login` on `platform`, or refuses it with the seconds until one may pass. */
  admit(platform: string, login: string): AdmittedCheck | RefusedCheck {
    if (this.limit.failures === 0) return NOTHING_TO_SETTLE;
    const now = this.now();
    this.sweep(now);
    const key = `${platform}\u0000${login}`;
    let account = this.accounts.get(key);
    if (account) this.expire(account, now);
    else {
      account = { failed: [], inFlight: 0 };
      this.accounts.set(key, account);
    }
    if (account.failed.length + account.inFlight >= this.limit.failures) {
      return { ok: false, retryAfterSeconds: this.retryAfter(account, now) };
    }
    account.inFlight++;
    const entry = account;
    let settled = false;
    return {
      ok: true,
      settle: (failed: boolean) => {
        if (settled) return;
        settled = true;
        entry.inFlight--;
        if (failed) entry.failed.push(this.now());
        if (entry.inFlight === 0 && entry.failed.length === 0 && this.accounts.get(key) === entry)
          this.accounts.delete(key);
      },
    };
  }

  /**
   * Whole seconds until a check may pass, at least 1: when the failures alone fill the bound, until enough of them
   * leave the window for the checks in flight and one more; when checks in flight fill it, a second (they end within
   * their deadline, and those that succeed free their place).
   */
  private retryAfter(account: Account, now: number): number {
    const room = this.limit.failures - account.inFlight;
    if (room <= 0) return 1;
    const leaving = account.failed[account.failed.length - room];
    return Math.max(1, Math.ceil((leaving + this.limit.windowMs - now) / 1000));
  }

  private expire(account: Account, now: number): void {
    const since = now - this.limit.windowMs;
    let drop = 0;
    while (drop < account.failed.length && account.failed[drop] <= since) drop++;
    if (drop > 0) account.failed.splice(0, drop);
  }

  /** Once per window: drops the accounts with nothing in flight and no failure left in the window. */
  private sweep(now: number): void {
    if (now - this.lastSweep < this.limit.windowMs) return;
    this.lastSweep = now;
    for (const [key, account] of this.accounts) {
      this.expire(account, now);
      if (account.inFlight === 0 && account.failed.length === 0) this.accounts.delete(key);
    }
  }
}
