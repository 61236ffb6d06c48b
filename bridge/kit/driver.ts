/**
 * The driver interface: what a bridge author implements to put one trading server behind the broker. The kit does
 * the protocol (docs/manager-protocol.md): the socket, the login with version negotiation, the capability list, the
 * snapshot's framing and backpressure, holding change events until the snapshot's end, fan-out, slow consumers, the
 * bounds on logins, connections and requests in flight (limits.ts), close codes and every answer's shape; and it
 * catches what the driver throws, so no driver failure ends the process. The driver says only what its server is and
 * does:
 *
 *   name, family, build     who the server is (`name` is its path: `ws://host:port/<name>`)
 *   events                  the change-event kinds it pushes (its snapshot holds only these kinds)
 *   commands                one handler per command, sync or async: `(args, session) => result`; throw
 *                           `ResultError(code, message)` to answer with a platform result code. The capability
 *                           list is these names plus `Ping`, which the kit answers itself (`{time}`).
 *   authenticate            (login, password, peer) → `{ok: true, rights}` or `{ok: false, code, message}`
 *   snapshot                the rows of each kind as of the login (any order: the kit sends them in the
 *                           documented order), taken in the same turn as the login's decision
 *   subscribe               hands the driver the function to call with every change (the kit fans it out)
 *
 * Optional hooks, for servers that need them (the simulator uses all of them):
 *
 *   coalesceKey / coalescedSummary   held events with the same key are coalesced to the last; after a key whose
 *                                    events were coalesced, the summary (PF4 `symbolInfo` after ticks)
 *   authorize               a rights check before a command: refuse it (the family's no-rights code), or drop the
 *                           connection (close 1008) where the family does so instead of answering
 *   gate                    runs before every request (login and Ping included): hold it (a promise) or swallow it
 *   openSession / closeSession       per-connection state (`session.state`)
 *   available               false refuses new connections with HTTP 503 (a restart window)
 *   observe                 counters: logins, refusals, answers, live events sent
 *
 * Rules the kit keeps, whatever the driver does: a command outside the capability list is answered with the family's
 * bad-arguments code and the message `unknown command <cmd>`; an exception that is not a ResultError is answered with
 * the family's internal-error code and the fixed message `internal error in <cmd>` (the exception's text goes only to
 * the log, never to the peer; for `login` only its class, as its text could hold the credentials); every request gets
 * at most one answer, written `id` first.
 */
import type { ChangeKind, Family } from '../../shared/protocol.js';

/** A structured log line (`msg` plus fields); never given a password. */
export type BridgeLog = (entry: Record<string, unknown>) => void;

export type ChangeOp = 'add' | 'update' | 'delete';

/** A change of what the broker caches: `record` is the whole record after add/update, its key fields for delete. */
export type ChangeEmit = (kind: ChangeKind, op: ChangeOp, record: unknown) => void;

/**
 * One kind of the snapshot: the rows as they stood at login, turned into wire records by `toWire` (default: as they
 * are) chunk by chunk, so a large snapshot is never built whole. `toWire` takes the part's own row type.
 */
export interface SnapshotPart {
  kind: ChangeKind;
  rows: readonly unknown[];
  toWire?: (row: never) => unknown;
}

/** What authenticate decides. `message` of a refusal goes to the peer: never put the password in it. */
export type LoginVerdict = { ok: true; rights: readonly string[] } | { ok: false; code: number; message: string };

export interface LoginAttempt {
  login: number;
  password: string;
  /** `address:port` of the connection. */
  peer: string;
}

/** A command refused by `authorize`: answered with `code` (default: the family's no-rights code), or dropped. */
export interface Refusal {
  message: string;
  code?: number;
  /** Close the connection with 1008 and `message` as its reason instead of answering. */
  drop?: boolean;
}

/** One manager connection as a driver sees it. */
export interface Session<S = undefined> {
  /** `address:port` of the connection. */
  readonly peer: string;
  /** The manager's login once logged in, null before. */
  readonly login: number | null;
  readonly rights: ReadonlySet<string>;
  /** Whether the session asked for the snapshot and change events (`pump`, default true). */
  readonly pumping: boolean;
  /** What `openSession` returned. */
  readonly state: S;
  /** Sends a close frame (code from CLOSE_CODES) and forgets the session. */
  close(code: number, reason: string): void;
  /** Ends the connection without a close frame, as a network failure would. */
  terminate(): void;
  /**
   * Streams a fresh snapshot to this session, change events held from its start until its end (as after the login);
   * it starts once the snapshot streaming now has ended and the server's hold is over. False, and nothing sent, for a
   * session that does not pump.
   */
  resync(): boolean;
}

export type CommandHandler<S = undefined> = (args: Record<string, unknown>, session: Session<S>) => unknown;

export interface Observer<S = undefined> {
  loggedIn?(session: Session<S>): void;
  loginRefused?(login: number, code: number, session: Session<S>): void;
  /** Every answer sent (login and Ping included); `failed` for an error answer. */
  answered?(cmd: string, failed: boolean, session: Session<S>): void;
  /** A change event left for a pumping session (after the snapshot). */
  eventSent?(session: Session<S>): void;
}

/** A request the kit is about to dispatch, as the gate sees it (`cmd` unchecked). */
export interface GatedRequest {
  id: number;
  cmd: unknown;
  args?: unknown;
}

export interface BridgeDriver<S = undefined> {
  readonly name: string;
  readonly family: Family;
  /** The trading server's build, reported at login (an integer ≥ 1). */
  readonly build: number;
  /** The change-event kinds this server pushes; its snapshot holds only these. */
  readonly events: readonly ChangeKind[];
  /** One handler per command name (called as a plain function), read once when the server is put behind the kit.
   * Not `login` or `Ping`. A handler returning undefined is answered `null`. */
  readonly commands: Readonly<Record<string, CommandHandler<S>>>;
  authenticate(attempt: LoginAttempt): LoginVerdict | Promise<LoginVerdict>;
  /**
   * The snapshot of a pumping login, called in the turn the login is decided, before its answer is sent, and again for
   * each new snapshot the server starts in mid-session (`resync`): every change emitted after this call reaches the
   * session after the snapshot's `end`. An asynchronous snapshot must read a state no older than the moment of the
   * call. Throwing (synchronously) fails the login with the internal-error code; in mid-session, or a rejection, or a
   * row its `toWire` or JSON cannot take, closes the session with 1011.
   */
  snapshot(session: Session<S>): SnapshotPart[] | Promise<SnapshotPart[]>;
  /** Called once with the function to report every change through; may return an unsubscribe. */
  subscribe?(emit: ChangeEmit): void | (() => void);
  /** A key under which held events of this kind coalesce to the last (ticks: the symbol), or undefined to keep all. */
  coalesceKey?(kind: ChangeKind, record: unknown): string | undefined;
  /** Sent after the last held event of `key` when some of that key's held events were coalesced away. */
  coalescedSummary?(key: string): { kind: ChangeKind; op: ChangeOp; record: unknown } | undefined;
  /** A rights check after the capability check, before the handler; undefined lets the command run. */
  authorize?(cmd: string, args: Record<string, unknown>, session: Session<S>): Refusal | undefined;
  /**
   * Before each request. undefined or true: go on now; false: swallow it unanswered (a fault drill's only use: the
   * broker waits for every answer); a promise: go on when it resolves (false swallows it).
   */
  gate?(request: GatedRequest, session: Session<S>): boolean | void | Promise<boolean | void>;
  openSession?(session: Session<S>): S;
  closeSession?(session: Session<S>): void;
  /** False while the server is down: upgrades are refused with 503. */
  available?(): boolean;
  observe?: Observer<S>;
  log?: BridgeLog;
}
