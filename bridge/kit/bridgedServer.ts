/**
 * One trading server behind the kit: its driver, its manager sessions and their limits, the fan-out of its change
 * events, and what the embedding process does to all of its sessions at once (hold and release their events, close
 * them for a restart, drop them, stop).
 *
 * Invariants: the driver's capability list is checked once, here (command names, event kinds, `Ping` always among
 * the commands, `login` and `Ping` never the driver's); a change event is serialised once and handed to every
 * session, which sends it only when pumping; an event of a kind the driver does not list is not sent (logged once per
 * kind).
 */
import type { WebSocket } from 'ws';
import { CHANGE_KINDS, CLOSE_CODES, LOGIN_LIMITS, type ChangeKind, type Family } from '../../shared/protocol.js';
import { stringifyJson } from '../../shared/losslessJson.js';
import type { Corkable } from '../../shared/writeBatch.js';
import type { BridgeDriver, BridgeLog, ChangeOp, CommandHandler } from './driver.js';
import { FAMILY_CODES, type FamilyCodes } from './familyCodes.js';
import { DEFAULT_LIMITS, type SessionLimits } from './limits.js';
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

  constructor(readonly driver: BridgeDriver<S>, options: BridgedServerOptions = {}) {
    this.name = driver.name;
    this.family = driver.family;
    if (!(driver.family in FAMILY_CODES)) throw new Error(`family must be PF4 or PF5, not ${String(driver.family)}`);
    if (!/^[^/?#\s]{1,256}$/.test(driver.name)) throw new Error('name must be 1 to 256 characters without /, ?, # or spaces (it is the path)');
    if (!Number.isInteger(driver.build) || driver.build < 1) throw new Error('build must be an integer of at least 1');
    this.codes = FAMILY_CODES[driver.family];
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    for (const kind of driver.events) {
      if (!(CHANGE_KINDS as readonly string[]).includes(kind)) throw new Error(`events: ${String(kind)} is not a change-event kind (${CHANGE_KINDS.join(', ')})`);
    }
    this.events = new Set(driver.events);
    for (const [cmd, handler] of Object.entries(driver.commands)) {
      if ((KIT_COMMANDS as readonly string[]).includes(cmd)) throw new Error(`commands: ${cmd} is answered by the kit, not the driver`);
      if (cmd.length === 0 || cmd.length > LOGIN_LIMITS.nameLength) throw new Error(`commands: ${cmd} must be 1 to ${LOGIN_LIMITS.nameLength} characters`);
      if (typeof handler !== 'function') throw new Error(`commands: ${cmd} has no handler function`);
      this.handlers.set(cmd, handler);
    }
    this.commandNames = ['Ping', ...this.handlers.keys()].sort();
    if (this.commandNames.length > LOGIN_LIMITS.commands) throw new Error(`commands: more than ${LOGIN_LIMITS.commands - 1} commands`);
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

  /** Whether new connections are taken now. */
  get available(): boolean {
    return !this.stopped && this.driver.available?.() !== false;
  }

  handler(cmd: string): CommandHandler<S> | undefined {
    return this.handlers.get(cmd);
  }

  log(entry: Record<string, unknown>): void {
    this.driver.log?.(entry);
  }

  /** A manager connection accepted by the listener. */
  accept(ws: WebSocket, peer: string, socket?: Corkable): ManagerSession<S> {
    const session = new ManagerSession(this, ws, peer, socket);
    this.sessionSet.add(session);
    return session;
  }

  /** Called by a session when it ends. */
  detach(session: ManagerSession<S>): void {
    if (this.sessionSet.delete(session)) this.driver.closeSession?.(session);
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
