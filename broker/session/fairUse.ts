/**
 * Fair use of one platform's manager session: the one resource all of a platform's callers share. Every command a
 * caller's call sends to the trading server takes a place here first (`ManagerSession.request`); the session's own
 * commands (login, keep-alive) do not.
 *
 * - At most `calls` commands are on the wire at once, and their answers are expected to take at most `bytes` in all
 *   (each command is charged the size its caller's answers to that command have had on this session, `estimate`; one alone
 *   is always let through: the session reads no answer frame past `answerFrameBound`).
 * - A command that finds no place waits, within its own deadline (past it, it was not sent), in its caller's queue.
 *   When a place frees, the waiting caller with the fewest commands on the wire goes first (round robin among equals),
 *   so a caller that sends one call at a time is never more than one answer behind a flood.
 * - A caller that already holds its share (`calls` and `bytes` divided among the callers active now: on the wire,
 *   waiting, or seen within `activeMs`) and would have to wait is refused at once with the seconds to wait
 *   (`FairUseRefusal`): a flood gets "too frequent" answers instead of a queue that grows until the trading server
 *   drops the session under every caller. Alone, a caller may use the whole session (its waiting queue is bounded by
 *   `queuedPerCaller`).
 *
 * Callers are named by the call frames (`CallFrame.client`: the edge's API client id); a frame without a name counts
 * as one caller of its own.
 */
import { DeadlineError } from './managerErrors.js';

export interface FairUseLimits {
  /** Commands of callers on the wire at once. */
  calls: number;
  /** Answer bytes expected on the wire at once. */
  bytes: number;
  /** Commands one caller may have waiting for a place. */
  queuedPerCaller: number;
  /** How long a caller counts as active after its last command ended. */
  activeMs: number;
  /** Seconds a refused caller is told to wait. */
  retryAfterSeconds: number;
}

export const DEFAULT_FAIR_USE: Readonly<FairUseLimits> = Object.freeze({
  calls: 16,
  bytes: 32 * 1024 * 1024,
  queuedPerCaller: 256,
  activeMs: 1000,
  retryAfterSeconds: 1,
});

/** What a command is charged before its first answer on this session is seen. */
export const FIRST_ESTIMATE_BYTES = 64 * 1024;

/** Estimates kept per session (callers × commands). */
const MAX_ESTIMATES = 4096;

const estimateKey = (caller: string, cmd: string) => `${caller}\u0000${cmd}`;

/** A caller past its share of a busy session: refused before anything was sent. */
export class FairUseRefusal extends Error {
  constructor(
    readonly caller: string,
    readonly retryAfterSeconds: number,
    readonly reason: string,
  ) {
    super(reason);
    this.name = 'FairUseRefusal';
  }
}

/** A place on the wire: released once the command's answer (of `answerBytes`) came, or it failed. */
export interface FairUsePlace {
  release(answerBytes?: number): void;
}

interface Waiter {
  cmd: string;
  charge: number;
  resolve(place: FairUsePlace): void;
  reject(error: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

interface Caller {
  onWire: number;
  bytes: number;
  waiting: Waiter[];
  lastSeen: number;
}

export interface FairUseStats {
  onWire: number;
  bytesOnWire: number;
  waiting: number;
  callers: number;
  refused: number;
}

export class FairUse {
  private readonly callers = new Map<string, Caller>();
  private readonly estimates = new Map<string, number>();
  private onWire = 0;
  private bytesOnWire = 0;
  private waitingCount = 0;
  /** Callers in the order they are offered a freed place (round robin among equals). */
  private turn: string[] = [];
  refused = 0;

  constructor(
    readonly limits: Readonly<FairUseLimits> = DEFAULT_FAIR_USE,
    private readonly now: () => number = Date.now,
  ) {}

  get stats(): FairUseStats {
    return {
      onWire: this.onWire,
      bytesOnWire: this.bytesOnWire,
      waiting: this.waitingCount,
      callers: this.callers.size,
      refused: this.refused,
    };
  }

  /**
   * The bytes `cmd` of `caller` is charged: the larger of its last answer and a slowly falling average of its answers,
   * for that caller (so one caller's huge answers are charged to it alone).
   */
  estimate(cmd: string, caller = ''): number {
    return Math.min(this.limits.bytes, this.estimates.get(estimateKey(caller, cmd)) ?? FIRST_ESTIMATE_BYTES);
  }

  /**
   * A place for one command of `callerName`: at once when there is one, else a promise settled when one frees
   * (rejected with a `DeadlineError` at `sendBy`: nothing was sent). Throws `FairUseRefusal` past the caller's share.
   */
  acquire(callerName: string, cmd: string, sendBy: number): FairUsePlace | Promise<FairUsePlace> {
    const now = this.now();
    const caller = this.callerOf(callerName, now);
    const charge = this.estimate(cmd, callerName);
    if (this.waitingCount === 0 && this.fits(caller, charge, now)) return this.admit(callerName, caller, cmd, charge);
    const share = this.shares(now);
    if (
      share.active > 1 &&
      (caller.onWire >= share.calls || (caller.onWire > 0 && caller.bytes + charge > share.bytes))
    ) {
      this.refused++;
      throw new FairUseRefusal(
        callerName,
        this.limits.retryAfterSeconds,
        `the trade platform's manager session is shared by ${share.active} callers and this one already has ${caller.onWire} ` +
          `of its ${this.limits.calls} commands on the wire; retry after ${this.limits.retryAfterSeconds} s`,
      );
    }
    if (caller.waiting.length >= this.limits.queuedPerCaller) {
      this.refused++;
      throw new FairUseRefusal(
        callerName,
        this.limits.retryAfterSeconds,
        `this caller already has ${caller.waiting.length} commands waiting for the trade platform's manager session; ` +
          `retry after ${this.limits.retryAfterSeconds} s`,
      );
    }
    const wait = sendBy - now;
    if (wait <= 0) throw new DeadlineError();
    return new Promise<FairUsePlace>((resolve, reject) => {
      const waiter: Waiter = {
        cmd,
        charge,
        resolve,
        reject,
        timer: setTimeout(() => {
          const at = caller.waiting.indexOf(waiter);
          if (at < 0) return;
          caller.waiting.splice(at, 1);
          this.waitingCount--;
          reject(
            new DeadlineError(
              'the call was not sent: the manager session was busy with other calls until its deadline',
            ),
          );
          this.forget(callerName, caller);
          // The head of the queue may have been what kept the others waiting.
          this.pump();
        }, wait),
      };
      caller.waiting.push(waiter);
      this.waitingCount++;
      if (!this.turn.includes(callerName)) this.turn.push(callerName);
      this.pump();
    });
  }

  /** Every waiting command fails (the session is closed for good). */
  close(error: Error): void {
    for (const caller of this.callers.values()) {
      for (const waiter of caller.waiting.splice(0)) {
        clearTimeout(waiter.timer);
        waiter.reject(error);
      }
    }
    this.waitingCount = 0;
    this.turn = [];
  }

  private callerOf(name: string, now: number): Caller {
    let caller = this.callers.get(name);
    if (!caller) {
      caller = { onWire: 0, bytes: 0, waiting: [], lastSeen: now };
      this.callers.set(name, caller);
      this.prune(now);
    }
    caller.lastSeen = now;
    return caller;
  }

  /** The session has room for `charge` more, and (when others are active) `caller` is within its share. */
  private fits(caller: Caller, charge: number, now: number): boolean {
    if (this.onWire >= this.limits.calls) return false;
    if (this.onWire > 0 && this.bytesOnWire + charge > this.limits.bytes) return false;
    const share = this.shares(now);
    if (share.active <= 1) return true;
    return caller.onWire < share.calls && (caller.onWire === 0 || caller.bytes + charge <= share.bytes);
  }

  private shares(now: number): { active: number; calls: number; bytes: number } {
    let active = 0;
    for (const caller of this.callers.values()) {
      if (caller.onWire > 0 || caller.waiting.length > 0 || now - caller.lastSeen < this.limits.activeMs) active++;
    }
    active = Math.max(1, active);
    return { active, calls: Math.max(1, Math.floor(this.limits.calls / active)), bytes: this.limits.bytes / active };
  }

  private admit(name: string, caller: Caller, cmd: string, charge: number): FairUsePlace {
    caller.onWire++;
    caller.bytes += charge;
    this.onWire++;
    this.bytesOnWire += charge;
    let released = false;
    return {
      release: (answerBytes?: number) => {
        if (released) return;
        released = true;
        caller.onWire--;
        caller.bytes -= charge;
        this.onWire--;
        this.bytesOnWire -= charge;
        caller.lastSeen = this.now();
        if (answerBytes !== undefined) this.learn(estimateKey(name, cmd), answerBytes);
        this.pump();
        this.forget(name, caller);
      },
    };
  }

  /** Rises to a larger answer at once, falls by a tenth of the difference after a smaller one. */
  private learn(key: string, bytes: number): void {
    const was = this.estimates.get(key) ?? FIRST_ESTIMATE_BYTES;
    this.estimates.delete(key);
    this.estimates.set(key, bytes >= was ? bytes : was - (was - bytes) / 10);
    // The estimates of recent callers and commands; the least recently learnt go first.
    if (this.estimates.size > MAX_ESTIMATES) this.estimates.delete(this.estimates.keys().next().value as string);
  }

  /** Hands freed places to waiting callers: fewest on the wire first, in turn among equals. */
  private pump(): void {
    const now = this.now();
    while (this.waitingCount > 0) {
      let best: { name: string; caller: Caller; at: number } | undefined;
      for (let at = 0; at < this.turn.length; at++) {
        const name = this.turn[at];
        const caller = this.callers.get(name);
        if (!caller || caller.waiting.length === 0) continue;
        if (!best || caller.onWire < best.caller.onWire) best = { name, caller, at };
      }
      if (!best) return;
      const waiter = best.caller.waiting[0];
      if (this.onWire >= this.limits.calls || (this.onWire > 0 && this.bytesOnWire + waiter.charge > this.limits.bytes))
        return;
      best.caller.waiting.shift();
      this.waitingCount--;
      clearTimeout(waiter.timer);
      // Served: to the back of the turn.
      this.turn.splice(best.at, 1);
      if (best.caller.waiting.length > 0) this.turn.push(best.name);
      best.caller.lastSeen = now;
      waiter.resolve(this.admit(best.name, best.caller, waiter.cmd, waiter.charge));
    }
  }

  private forget(name: string, caller: Caller): void {
    if (caller.waiting.length === 0) {
      const at = this.turn.indexOf(name);
      if (at >= 0) this.turn.splice(at, 1);
    }
  }

  /** Drops callers idle for long (so the map holds the callers of recent seconds, not every caller ever seen). */
  private prune(now: number): void {
    if (this.callers.size < 64) return;
    for (const [name, caller] of this.callers) {
      if (caller.onWire === 0 && caller.waiting.length === 0 && now - caller.lastSeen > this.limits.activeMs * 10)
        this.callers.delete(name);
    }
  }
}
