/**
 * The world behind the conformance test servers (the correct base and its deliberately broken variants): a few
 * accounts and groups of one family and the managers who may log in. Records are never changed in place: a change
 * replaces the record, so the rows a snapshot took stay as they were at the login.
 *
 * Every change is reported through `change`, to the kit's emit once the server subscribed. The broken variants may
 * instead drop a change (`quietly`) or hold it until after the answer to the next request (`later` and
 * `releaseHeldAfterThisAnswer`): the base world does neither.
 *
 * Two things move on their own, so that a snapshot served again later is stale and every pumping session gets a
 * change made during its snapshot: a granted login stamps the manager's own account (`lastDate`, strictly
 * increasing) before any snapshot is taken, so it is in that login's snapshot and reaches the other pumping sessions
 * as an event; and a pumping login, once its snapshot is taken, counts itself in the `sessions` of that account's
 * group, so that change is held for the session until its snapshot's end. A still world (`still`) does neither: only
 * the writes change its records, so a snapshot served again is stale only once a write has been made.
 */
import type { ChangeEmit, ChangeOp, LoginVerdict } from '../../kit/index.js';
import { compareInt64, type Int64 } from '../../../shared/int64.js';
import type { ChangeKind } from '../../../shared/protocol.js';

export type Row = Record<string, unknown>;

export interface Manager {
  password: string;
  rights: readonly string[];
}

/** How long a restarting server refuses connections, and how long after its answer SrvRestart takes effect. */
export const RESTART_DOWN_MS = 50;
export const RESTART_AFTER_MS = 20;

type Mode = 'report' | 'drop' | 'hold';

export class TinyWorld {
  /** Accounts by login (canonical int64: a number while safe, a bigint beyond). */
  readonly users = new Map<Int64, Row>();
  readonly groups = new Map<string, Row>();
  /** Account passwords by login: server-side only, never in a record. */
  readonly passwords = new Map<Int64, string>();
  /** Set by whoever serves the world: restarts the server's sessions (the kit's BridgedServer.restart). */
  restartServer: () => void = () => {};
  private emit: ChangeEmit = () => {};
  private mode: Mode = 'report';
  private held: Array<[ChangeKind, ChangeOp, unknown]> = [];
  private down = false;
  private lastStamp = 0;
  private movesOnItsOwn = true;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    readonly managers: ReadonlyMap<number, Manager>,
    private readonly refusedLoginCode: number,
  ) {}

  /** From now on nothing moves on its own (no login stamps, no session counts): only writes change records. */
  still(): this {
    this.movesOnItsOwn = false;
    return this;
  }

  /** The kit's subscribe. */
  subscribe(emit: ChangeEmit): () => void {
    this.emit = emit;
    return () => {
      this.emit = () => {};
    };
  }

  /** Accounts in login order. */
  sortedUsers(): Row[] {
    return [...this.users.values()].sort((a, b) => compareInt64(a.login as Int64, b.login as Int64));
  }

  /** A page of accounts after `after` (exclusive), at most `limit`. */
  usersPage(after: Int64 | undefined, limit: number): { items: Row[]; hasMore: boolean } {
    const rest = this.sortedUsers().filter((u) => after === undefined || (u.login as Int64) > after);
    return { items: rest.slice(0, limit), hasMore: rest.length > limit };
  }

  putUser(record: Row): void {
    const login = record.login as Int64;
    const op: ChangeOp = this.users.has(login) ? 'update' : 'add';
    this.users.set(login, record);
    this.change('users', op, record);
  }

  deleteUser(login: Int64): void {
    if (!this.users.delete(login)) return;
    this.passwords.delete(login);
    this.change('users', 'delete', { login });
  }

  putGroup(record: Row): void {
    const name = record.group as string;
    const op: ChangeOp = this.groups.has(name) ? 'update' : 'add';
    this.groups.set(name, record);
    this.change('groups', op, record);
  }

  authenticate(login: number, password: string): LoginVerdict {
    const manager = this.managers.get(login);
    if (!manager || manager.password !== password)
      return { ok: false, code: this.refusedLoginCode, message: 'invalid manager login or password' };
    this.stampAccess(login);
    return { ok: true, rights: manager.rights };
  }

  /** A granted login: the manager's own account (if it has one) records the time, before any snapshot is taken. */
  private stampAccess(login: number): void {
    const account = this.users.get(login);
    if (!account || !this.movesOnItsOwn) return;
    this.lastStamp = Math.max(Date.now(), this.lastStamp + 1);
    this.putUser({ ...account, lastDate: new Date(this.lastStamp).toISOString() });
  }

  /** A pumping login whose snapshot is taken: the group of the manager's own account (if any) counts the session. */
  countSession(login: number): void {
    const group = this.groups.get(String(this.users.get(login)?.group));
    if (group && this.movesOnItsOwn) this.putGroup({ ...group, sessions: Number(group.sessions ?? 0) + 1 });
  }

  /** Reports a change (or drops or holds it, in a broken variant's `quietly` or `later`). */
  change(kind: ChangeKind, op: ChangeOp, record: unknown): void {
    if (this.mode === 'drop') return;
    if (this.mode === 'hold') this.held.push([kind, op, record]);
    else this.emit(kind, op, record);
  }

  /** Runs `fn` with its changes made but never reported. */
  quietly<T>(fn: () => T): T {
    return this.inMode('drop', fn);
  }

  /** Runs `fn` with its changes held until `releaseHeldAfterThisAnswer`. */
  later<T>(fn: () => T): T {
    return this.inMode('hold', fn);
  }

  /** Called before a request is answered: the changes held are reported just after that answer is written. */
  releaseHeldAfterThisAnswer(): void {
    if (this.held.length === 0) return;
    const held = this.held;
    this.held = [];
    queueMicrotask(() => {
      for (const [kind, op, record] of held) this.emit(kind, op, record);
    });
  }

  private inMode<T>(mode: Mode, fn: () => T): T {
    const before = this.mode;
    this.mode = mode;
    try {
      return fn();
    } finally {
      this.mode = before;
    }
  }

  /** Whether the server takes connections (not during a restart). */
  get available(): boolean {
    return !this.down;
  }

  /** SrvRestart: shortly after its answer the server ends every session and is down for RESTART_DOWN_MS. */
  scheduleRestart(): void {
    this.after(RESTART_AFTER_MS, () => {
      this.down = true;
      this.restartServer();
      this.after(RESTART_DOWN_MS, () => {
        this.down = false;
      });
    });
  }

  /** Cancels what is scheduled (the server stops). */
  stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private after(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
  }
}
