/**
 * One manager connection to a simulated trading server: login, command dispatch with the server's fault switches
 * applied, the resync snapshot streamed with backpressure, and the live change stream after it.
 *
 * While the snapshot streams (and while the server is frozen) change events are held back and sent after it, so
 * every event the broker sees after `resync end` is newer than the snapshot. Held ticks are coalesced to the last
 * one per symbol; other events are kept in order. Where coalescing dropped ticks, the world's summary of the symbol
 * follows the last one (PF4 symbolInfo), so what the dropped ticks moved is not lost.
 */
import type { WebSocket } from 'ws';
import { chooseVersion, PROTOCOL_VERSIONS, UNNAMED_VERSIONS, RESYNC_CHUNK, type ChangeKind, type Family, type LoginResult, type ManagerRequest } from '../../shared/protocol.js';
import { ArgReader } from '../world/args.js';
import { CommandError } from '../world/commandError.js';
import type { SnapshotPart } from '../world/simWorld.js';
import type { TradingServer } from '../server/tradingServer.js';
import { writeBatch, type Corkable } from '../../shared/writeBatch.js';
import { parseJson, stringifyJson } from '../../shared/losslessJson.js';

/** Stop writing snapshot chunks while this much is queued on the socket. */
const RESYNC_HIGH_WATER = 4 * 1024 * 1024;
/** A live consumer this far behind is disconnected; it will reconnect and resync. */
const LIVE_MAX_BUFFERED = 64 * 1024 * 1024;
/** Held (non-tick) events beyond this mean the session can no longer catch up. */
const MAX_HELD_EVENTS = 1_000_000;
const MAX_PARKED_REQUESTS = 10_000;
/** SrvRestart answers first and drops connections this much later. */
const SRV_RESTART_GRACE_MS = 50;

/** The change-event kinds each simulated family pushes (its snapshot's kinds and those pushed only live). */
const EVENTS: Record<Family, readonly ChangeKind[]> = {
  PF4: ['users', 'trades', 'ticks', 'symbols', 'groups', 'margin', 'online', 'news', 'newsBodies', 'symbolGroups',
    'symbolSessions', 'symbolInfo', 'mail'],
  PF5: ['users', 'positions', 'orders', 'deals', 'ticks', 'symbols', 'groups'],
};

/** Commands the session answers itself rather than the world's registry. */
const SESSION_COMMANDS: Record<Family, readonly string[]> = { PF4: ['Ping', 'ServerTime', 'SrvRestart'], PF5: ['Ping', 'ServerTime'] };

/** The session was dropped instead of answering. */
const DROPPED = Symbol('dropped');

type Answer = { id: number; result: unknown } | { id: number; error: { code: number; message: string } };

export class ManagerSession {
  private managerLogin: number | null = null;
  private rights: ReadonlySet<string> = new Set();
  /** Per-connection server state (sync sessions, the daily-sync snapshot); gone with the connection. */
  private readonly sessionState = new Map<string, unknown>();
  private pumping = false;
  private resyncing = false;
  private closed = false;
  private heldEvents: string[] = [];
  private heldTicks = new Map<string, string>();
  /** Symbols with more than one tick held: some were dropped by coalescing. */
  private coalescedSymbols = new Set<string>();
  private parked: ManagerRequest[] = [];
  /** Before each send: the frames of one turn (a slice of ticks and their events, a batch of answers) leave in one write. */
  private readonly hold: () => void;

  constructor(private readonly ws: WebSocket, private readonly server: TradingServer, readonly peer: string, socket?: Corkable) {
    this.hold = socket ? writeBatch(socket) : () => {};
    server.attach(this);
    ws.on('message', (data, isBinary) => this.onFrame(data.toString(), isBinary));
    ws.on('close', () => this.onClosed());
    ws.on('error', (err) => server.log({ msg: 'manager socket error', server: server.name, error: err.message }));
  }

  get loggedIn(): boolean {
    return this.managerLogin !== null;
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.ws.close(code, reason);
    this.onClosed();
  }

  terminate(): void {
    if (this.closed) return;
    this.ws.terminate();
    this.onClosed();
  }

  /** A change event, already serialised. `tickSymbol` marks a tick that may be coalesced while held. */
  pushEvent(text: string, tickSymbol?: string): void {
    if (!this.pumping || this.closed) return;
    // While older events wait (a thaw in progress releases session by session), a new one waits behind them.
    if (this.resyncing || this.server.faults.frozen || this.heldEvents.length > 0 || this.heldTicks.size > 0) {
      if (tickSymbol !== undefined) {
        if (this.heldTicks.has(tickSymbol)) this.coalescedSymbols.add(tickSymbol);
        this.heldTicks.set(tickSymbol, text);
      } else if (this.heldEvents.push(text) > MAX_HELD_EVENTS) {
        this.server.log({ msg: 'too many held events, closing session', server: this.server.name });
        this.close(1013, 'too many pending events');
      }
      return;
    }
    this.sendLive(text);
  }

  /** The server was unfrozen: release held events, then answer what arrived meanwhile (its events come after). */
  thaw(): void {
    if (this.closed) return;
    if (!this.resyncing) this.releaseHeld();
    const parked = this.parked;
    this.parked = [];
    for (const request of parked) void this.dispatch(request);
  }

  private onClosed(): void {
    if (this.closed) return;
    this.closed = true;
    this.heldEvents = [];
    this.heldTicks.clear();
    this.coalescedSymbols.clear();
    this.parked = [];
    this.sessionState.clear();
    this.server.detach(this);
  }

  private onFrame(text: string, isBinary: boolean): void {
    let frame: unknown;
    try {
      if (isBinary) throw new Error('binary frame');
      // Lossless: PF5 ids beyond 2^53 − 1 arrive as exact bigints and leave as bare digits.
      frame = parseJson(text);
    } catch {
      this.server.log({ msg: 'invalid manager frame, closing', server: this.server.name, peer: this.peer });
      this.close(1007, 'frames must be JSON text');
      return;
    }
    const request = frame as Partial<ManagerRequest>;
    if (typeof frame !== 'object' || frame === null || typeof request.id !== 'number') {
      this.close(1007, 'a request needs a numeric id');
      return;
    }
    void this.dispatch(request as ManagerRequest);
  }

  private async dispatch(request: ManagerRequest): Promise<void> {
    if (this.closed) return;
    if (this.server.faults.frozen) {
      if (this.parked.length < MAX_PARKED_REQUESTS) this.parked.push(request);
      return;
    }
    const delay = this.server.faults.delayFor(String(request.cmd));
    if (delay > 0) {
      await sleep(delay);
      if (this.closed) return;
      // A freeze that began while the answer was delayed holds it too.
      if (this.server.faults.frozen) {
        if (this.parked.length < MAX_PARKED_REQUESTS) this.parked.push(request);
        return;
      }
    }
    const answer = this.execute(request);
    if (answer === DROPPED) return;
    this.server.counters.commandsServed++;
    if ('error' in answer) this.server.counters.commandErrors++;
    this.send(stringifyJson(answer));
    if ('result' in answer && request.cmd === 'login' && this.pumping) void this.streamResync();
  }

  private execute(request: ManagerRequest): Answer | typeof DROPPED {
    const { id, cmd } = request;
    const codes = this.server.codes;
    try {
      if (typeof cmd !== 'string' || cmd.length === 0) throw new CommandError(codes.badArgs, 'cmd must be a non-empty string');
      const rawArgs = request.args ?? {};
      if (typeof rawArgs !== 'object' || rawArgs === null || Array.isArray(rawArgs)) {
        throw new CommandError(codes.badArgs, 'args must be an object');
      }
      const args = rawArgs as Record<string, unknown>;
      if (cmd === 'login') return { id, result: this.login(args) };
      if (!this.loggedIn) throw new CommandError(codes.noRights, `${cmd} needs a logged-in manager session`);
      const needed = this.server.world.commands().requiredRight(cmd, args);
      if (needed && !this.rights.has(needed.right)) {
        if (needed.drop) {
          // A report window asked for without the permission: the server drops the manager, it does not answer.
          this.server.log({ msg: 'manager asked for a report without the right, dropping', server: this.server.name,
            login: this.managerLogin, cmd, right: needed.right });
          this.server.counters.rightsDrops++;
          this.close(1008, `${cmd} needs the ${needed.right} right`);
          return DROPPED;
        }
        throw new CommandError(codes.noRights, `${cmd} needs the ${needed.right} right`);
      }
      return { id, result: this.command(cmd, args) };
    } catch (err) {
      if (err instanceof CommandError) return { id, error: { code: err.code, message: err.message } };
      this.server.log({ msg: 'command failed', server: this.server.name, cmd, error: (err as Error).message });
      return { id, error: { code: codes.internal, message: `internal error in ${String(cmd)}` } };
    }
  }

  private command(cmd: string, args: Record<string, unknown>): unknown {
    switch (cmd) {
      case 'Ping': return { time: new Date().toISOString() };
      case 'ServerTime': return new Date().toISOString();
      case 'SrvRestart':
        if (this.server.family !== 'PF4') break;
        this.server.scheduleRestart(SRV_RESTART_GRACE_MS);
        return true;
    }
    const context = { managerLogin: this.managerLogin as number, rights: this.rights, session: this.sessionState };
    return this.server.world.commands().run(cmd, args, context);
  }

  private login(raw: Record<string, unknown>): LoginResult {
    const codes = this.server.codes;
    if (this.loggedIn) throw new CommandError(codes.badArgs, 'this session is already logged in');
    const args = new ArgReader(raw, codes.badArgs);
    const login = args.int('login', { min: 1 });
    const password = typeof raw.password === 'string' ? raw.password : args.fail('password must be a string');
    if (raw.pump !== undefined && typeof raw.pump !== 'boolean') args.fail('pump must be a boolean');
    const offered = raw.versions ?? UNNAMED_VERSIONS;
    if (!Array.isArray(offered) || offered.length === 0 || offered.length > 16 || !offered.every((v) => Number.isInteger(v))) {
      args.fail('versions must list the protocol versions the client speaks (1 to 16 integers)');
    }
    const version = chooseVersion(offered as number[]);
    if (version === undefined) {
      args.fail(`none of the protocol versions ${(offered as number[]).join(', ')} is spoken here (${PROTOCOL_VERSIONS.join(', ')})`);
    }
    const outcome = this.server.authenticate(login, password);
    if (!outcome.ok) {
      this.server.counters.loginFailures++;
      this.server.log({ msg: 'manager login refused', server: this.server.name, login, code: outcome.code, peer: this.peer });
      throw new CommandError(outcome.code, outcome.message);
    }
    this.managerLogin = login;
    this.rights = new Set(outcome.rights);
    this.server.world.journal?.(`manager ${login} logged in`, this.peer, 'Logins');
    this.pumping = raw.pump !== false;
    // Hold events from this moment: the snapshot is taken right after the answer is sent, in the same turn.
    this.resyncing = this.pumping;
    this.server.counters.logins++;
    this.server.log({ msg: 'manager logged in', server: this.server.name, login, pump: this.pumping, peer: this.peer });
    const family = this.server.family;
    return {
      version: version as number, server: this.server.name, family, build: this.server.build, rights: outcome.rights,
      capabilities: {
        commands: [...new Set([...SESSION_COMMANDS[family], ...this.server.world.commands().names()])].sort(),
        events: [...EVENTS[family]],
      },
    };
  }

  private async streamResync(): Promise<void> {
    const parts: SnapshotPart[] = this.server.world.snapshot();
    const counts: Record<string, number> = {};
    for (const part of parts) counts[part.kind] = part.rows.length;
    this.send(JSON.stringify({ event: 'resync', op: 'begin', record: { server: this.server.name, family: this.server.family } }));
    for (const part of parts) {
      const toWire = part.toWire as (row: unknown) => unknown;
      for (let offset = 0; offset < part.rows.length; offset += RESYNC_CHUNK) {
        if (!(await this.writable())) return;
        const items = part.rows.slice(offset, offset + RESYNC_CHUNK).map(toWire);
        this.send(stringifyJson({ event: 'resync', op: 'chunk', record: { kind: part.kind, items } }));
      }
    }
    if (!(await this.writable())) return;
    this.send(JSON.stringify({ event: 'resync', op: 'end', record: { counts } }));
    this.resyncing = false;
    if (!this.server.faults.frozen) this.releaseHeld();
  }

  /** Waits until the socket has room and the server is not frozen; false once the session is gone. */
  private async writable(): Promise<boolean> {
    while (!this.closed && (this.ws.bufferedAmount > RESYNC_HIGH_WATER || this.server.faults.frozen)) {
      await sleep(5);
    }
    return !this.closed;
  }

  private releaseHeld(): void {
    const events = this.heldEvents;
    const ticks = this.heldTicks;
    const coalesced = this.coalescedSymbols;
    this.heldEvents = [];
    this.heldTicks = new Map();
    this.coalescedSymbols = new Set();
    for (const text of events) this.sendLive(text);
    for (const text of ticks.values()) this.sendLive(text);
    for (const symbol of coalesced) {
      const summary = this.server.world.coalescedTick?.(symbol);
      if (summary) this.sendLive(stringifyJson({ event: summary.kind, op: 'update', record: summary.record }));
    }
  }

  private sendLive(text: string): void {
    if (this.ws.bufferedAmount > LIVE_MAX_BUFFERED) {
      this.server.log({ msg: 'manager too slow, closing session', server: this.server.name, peer: this.peer });
      this.close(1013, 'consumer too slow');
      return;
    }
    this.server.counters.eventsSent++;
    this.send(text);
  }

  private send(text: string): void {
    if (this.closed || this.ws.readyState !== this.ws.OPEN) return;
    this.hold();
    this.ws.send(text);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
