/**
 * One trading server behind the kit: its driver, its manager sessions and their limits, the fan-out of its change
 * events, and what the embedding process does to all of its sessions at once (hold and release their events, stream
 * a new snapshot to them, close them for a restart, drop them, stop).
 *
 * Invariants: the driver's capability list and the limits are checked once, here (command names, event kinds, `Ping`
 * always among the commands, `login` and `Ping` never the driver's, each limit a positive integer); a change event is
 * serialised once and handed to every session, which sends it only when pumping; an event of a kind the driver does
 * not list is not sent (logged once per kind). What the driver's logger, availability check or closeSession throws
 * is caught here: a logger's failure is ignored, the others are logged.
 */
import type { WebSocket } from 'ws';
import { CHANGE_KINDS, CLOSE_CODES, LOGIN_LIMITS, type ChangeKind, type Family } from '../../shared/protocol.js';
import { stringifyJson } from '../../shared/losslessJson.js';
import type { Corkable } from '../../shared/writeBatch.js';
import type { BridgeDriver, ChangeOp, CommandHandler } from './driver.js';
import { errorClass } from './errorClass.js';
import { FAMILY_CODES, type FamilyCodes } from './familyCodes.js';
import { checkLimits, type SessionLimits } from './limits.js';
import { ManagerSession } from './managerSession.js';

/** The commands the kit answers itself. */
const KIT_COMMANDS = ['login', 'Ping'] as const;

export interface BridgedServerOptions {
  limits?: Partial<SessionLimits>;
}

export class BridgedServer<S = undefined> {
  readonly name: string;
  readonly family: Family;
  readonly codes: FamilyCodes;
  readonly limits: Readonly<SessionLimits>;
  /** The capability list's commands: the driver's and Ping, sorted. */
  readonly commandNames: readonly string[];
  private readonly handlers = new Map<string, CommandHandler<S>>();
  private readonly sessionSet = new Set<ManagerSession<S>>();
  private readonly events: ReadonlySet<ChangeKind>;
  private readonly undeclaredLogged = new Set<string>();
  private readonly unsubscribe: (() => void) | undefined;
  private held = false;
  private stopped = false;

  constructor(
    readonly driver: BridgeDriver<S>,
    options: BridgedServerOptions = {},
  ) {
    this.name = driver.name;
    this.family = driver.family;
    if (!(driver.family in FAMILY_CODES)) throw new Error(`family must be PF4 or PF5, not ${String(driver.family)}`);
    if (!/^[^/?#\s]{1,256}$/.test(driver.name))
      throw new Error('name must be 1 to 256 characters without /, ?, # or spaces (it is the path)');
    if (!Number.isInteger(driver.build) || driver.build < 1) throw new Error('build must be an integer of at least 1');
    this.codes = FAMILY_CODES[driver.family];
    this.limits = checkLimits(options.limits);
    for (const kind of driver.events) {
      if (!(CHANGE_KINDS as readonly string[]).includes(kind))
        throw new Error(`events: ${String(kind)} is not a change-event kind (${CHANGE_KINDS.join(', ')})`);
    }
    this.events = new Set(driver.events);
    for (const [cmd, handler] of Object.entries(driver.commands)) {
      if ((KIT_COMMANDS as readonly string[]).includes(cmd))
        throw new Error(`commands: ${cmd} is answered by the kit, not the driver`);
      if (cmd.length === 0 || cmd.length > LOGIN_LIMITS.nameLength)
        throw new Error(`commands: ${cmd} must be 1 to ${LOGIN_LIMITS.nameLength} characters`);
      if (typeof handler !== 'function') throw new Error(`commands: ${cmd} has no handler function`);
      this.handlers.set(cmd, handler);
    }
    this.commandNames = ['Ping', ...this.handlers.keys()].sort();
    if (this.commandNames.length > LOGIN_LIMITS.commands)
      throw new Error(`commands: more than ${LOGIN_LIMITS.commands - 1} commands`);
    this.unsubscribe = driver.subscribe?.((kind, op, record) => this.publish(kind, op, record)) ?? undefined;
  }

  /** The open manager sessions (logged in or not). */
  get sessions(): ReadonlySet<ManagerSession<S>> {
    return this.sessionSet;
  }

  /** Whether change events are held for every session (and the snapshots paused). */
  get holding(): boolean {
    return this.held;
  }

  /** Whether new connections are taken now (not while the driver's check throws). */
  get available(): boolean {
    if (this.stopped) return false;
    try {
      return this.driver.available?.() !== false;
    } catch (err) {
      this.log({ msg: "the driver's availability check failed", server: this.name, error: errorClass(err) });
      return false;
    }
  }

  /** Whether the server has room for one more connection (`limits.maxSessions`). */
  get full(): boolean {
    return this.sessionSet.size >= this.limits.maxSessions;
  }

  handler(cmd: string): CommandHandler<S> | undefined {
    return this.handlers.get(cmd);
  }

  /** A line to the driver's log; a logger that throws is ignored (the kit's work goes on). */
  log(entry: Record<string, unknown>): void {
    try {
      this.driver.log?.(entry);
    } catch {
      // Nowhere left to say it.
    }
  }

  /** A manager connection accepted by the listener (kept unless its driver's openSession failed and closed it). */
  accept(ws: WebSocket, peer: string, socket?: Corkable): ManagerSession<S> {
    const session = new ManagerSession(this, ws, peer, socket);
    if (session.open) this.sessionSet.add(session);
    return session;
  }

  /** Called by a session when it ends. */
  detach(session: ManagerSession<S>): void {
    if (!this.sessionSet.delete(session)) return;
    try {
      this.driver.closeSession?.(session);
    } catch (err) {
      this.log({ msg: 'closing a session failed', server: this.name, peer: session.peer, error: errorClass(err) });
    }
  }

  /** A change: serialised once, then sent (or held) for every pumping session. */
  publish(kind: ChangeKind, op: ChangeOp, record: unknown): void {
    if (this.sessionSet.size === 0) return;
    if (!this.events.has(kind)) {
      if (!this.undeclaredLogged.has(kind)) {
        this.undeclaredLogged.add(kind);
        this.log({ msg: 'change event of a kind the server does not list, not sent', server: this.name, kind });
      }
      return;
    }
    const text = stringifyJson({ event: kind, op, record });
    const key = this.driver.coalesceKey?.(kind, record);
    for (const session of this.sessionSet) session.deliver(text, key);
  }

  /** Holds every session's change events (and pauses their snapshots) until `release`. */
  hold(): void {
    this.held = true;
  }

  /** Ends a hold: each session sends what it held, in order. */
  release(): void {
    if (!this.held) return;
    this.held = false;
    for (const session of [...this.sessionSet]) session.released();
  }

  /**
   * Streams a new snapshot to every pumping session, holding each one's change events from its start until its end,
   * as after a login (`ManagerSession.resync`): for a bridge whose link to its trading server was re-established,
   * its state possibly lost meanwhile. The sessions stay logged in; the broker builds the new tables beside its
   * current ones and swaps them in at `end`. Returns how many sessions will get it.
   */
  resync(): number {
    let count = 0;
    for (const session of [...this.sessionSet]) if (session.resync()) count++;
    return count;
  }

  /** Closes every session with `code` (from CLOSE_CODES) and `reason`: they reconnect, log in and resync. */
  closeAll(code: number, reason: string): void {
    for (const session of [...this.sessionSet]) session.close(code, reason);
  }

  /** Closes every session with CLOSE_CODES.restart (1012), as a restarting server does. */
  restart(reason = 'server restart'): void {
    this.closeAll(CLOSE_CODES.restart, reason);
  }

  /** Ends every connection without a close frame, as a network failure would. */
  drop(): void {
    for (const session of [...this.sessionSet]) session.terminate();
  }

  /** Stops taking connections, stops listening to the driver's changes and drops every session. */
  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    this.drop();
  }
}
