/**
 * One manager connection to a bridged trading server: login first (arguments checked, a protocol version chosen, the
 * driver's verdict), then command dispatch, the snapshot of a pumping login streamed with backpressure, and the live
 * change stream after it.
 *
 * Invariants:
 * - Every request gets at most one answer, `{id, result}` or `{id, error: {code, message}}`, `id` written first; a
 *   request is left unanswered only when the connection is gone, the gate swallowed it, or `authorize` dropped the
 *   connection (1008).
 * - Change events are held from the moment a pumping login is decided (the snapshot is taken then, before the answer
 *   is sent) until the snapshot's `end`, and while the server holds them (`BridgedServer.hold`); released in order,
 *   held events first, then the last event of each coalesced key, then each coalesced key's summary. A new event
 *   waits behind held ones, so none overtakes another. Every event after `end` is newer than the snapshot.
 * - A session past its limits (bytes queued while live, events held) is closed with CLOSE_CODES.tooSlow; a frame
 *   that is not JSON text or a request without a numeric id closes it with CLOSE_CODES.badFrame.
 */
import type { WebSocket } from 'ws';
import { CLOSE_CODES, type ChangeKind, type LoginResult, loginResultSchema, RESYNC_CHUNK } from '../../shared/protocol.js';
import { parseJson, stringifyJson } from '../../shared/losslessJson.js';
import { writeBatch, type Corkable } from '../../shared/writeBatch.js';
import type { BridgedServer } from './bridgedServer.js';
import type { GatedRequest, LoginVerdict, Session, SnapshotPart } from './driver.js';
import { MAX_CLOSE_REASON_BYTES, RESYNC_POLL_MS } from './limits.js';
import { checkLogin, type CheckedLogin } from './loginArgs.js';
import { ResultError } from './resultError.js';
import { orderSnapshot } from './snapshotOrder.js';

type Answer = { id: number; result: unknown } | { id: number; error: { code: number; message: string } };

/** `authorize` dropped the connection instead of answering. */
const DROPPED = Symbol('dropped');
type Outcome = Answer | typeof DROPPED;

/** Close code of a session whose asynchronous snapshot failed (WebSocket's "internal error"). */
export const CLOSE_SNAPSHOT_FAILED = CLOSE_CODES.snapshotFailed;

/** The longest command name repeated in a message. */
const MAX_NAMED = 128;

export class ManagerSession<S = undefined> implements Session<S> {
  login: number | null = null;
  rights: ReadonlySet<string> = new Set();
  pumping = false;
  state: S;
  private loginPending = false;
  private resyncing = false;
  private closed = false;
  /** The snapshot of a pumping login, taken when the login was decided, sent once its answer is out. */
  private snapshot: SnapshotPart[] | Promise<SnapshotPart[]> | null = null;
  private heldEvents: string[] = [];
  private heldKeyed = new Map<string, string>();
  /** Keys with more than one event held: some were coalesced away. */
  private coalescedKeys = new Set<string>();
  /** Before each send: the frames of one turn (answers of one batch, a release of held events) leave in one write. */
  private readonly hold: () => void;

  constructor(private readonly server: BridgedServer<S>, private readonly ws: WebSocket, readonly peer: string, socket?: Corkable) {
    this.hold = socket ? writeBatch(socket) : () => {};
    this.state = server.driver.openSession ? server.driver.openSession(this) : (undefined as S);
    ws.on('message', (data, isBinary) => this.onFrame(data.toString(), isBinary));
    ws.on('close', () => this.onClosed());
    ws.on('error', (err) => this.server.log({ msg: 'manager socket error', server: server.name, error: err.message }));
  }

  get loggedIn(): boolean {
    return this.login !== null;
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.ws.close(code, closeReason(reason));
    this.onClosed();
  }

  terminate(): void {
    if (this.closed) return;
    this.ws.terminate();
    this.onClosed();
  }

  /** A change event, serialised once for every session; `key` marks one that coalesces while held. */
  deliver(text: string, key: string | undefined): void {
    if (!this.pumping || this.closed) return;
    if (this.resyncing || this.server.holding || this.heldEvents.length > 0 || this.heldKeyed.size > 0) {
      if (key === undefined) this.heldEvents.push(text);
      else {
        if (this.heldKeyed.has(key)) this.coalescedKeys.add(key);
        this.heldKeyed.set(key, text);
      }
      if (this.heldEvents.length + this.heldKeyed.size > this.server.limits.maxHeldEvents) {
        this.server.log({ msg: 'too many held events, closing session', server: this.server.name, peer: this.peer });
        this.close(CLOSE_CODES.tooSlow, 'too many pending events');
      }
      return;
    }
    this.sendLive(text);
  }

  /** The server's hold ended: release what was held, unless the snapshot still streams (its end releases them). */
  released(): void {
    if (!this.closed && !this.resyncing && !this.server.holding) this.releaseHeld();
  }

  private onClosed(): void {
    if (this.closed) return;
    this.closed = true;
    this.heldEvents = [];
    this.heldKeyed.clear();
    this.coalescedKeys.clear();
    this.snapshot = null;
    this.server.detach(this);
  }

  private onFrame(text: string, isBinary: boolean): void {
    if (this.closed) return;
    let frame: unknown;
    try {
      if (isBinary) throw new Error('binary frame');
      // Lossless: PF5 ids beyond 2^53 − 1 arrive as exact bigints and leave as bare digits.
      frame = parseJson(text);
    } catch {
      this.server.log({ msg: 'invalid manager frame, closing', server: this.server.name, peer: this.peer });
      this.close(CLOSE_CODES.badFrame, 'frames must be JSON text');
      return;
    }
    if (typeof frame !== 'object' || frame === null || typeof (frame as { id?: unknown }).id !== 'number') {
      this.close(CLOSE_CODES.badFrame, 'a request needs a numeric id');
      return;
    }
    const request = frame as GatedRequest;
    const { driver } = this.server;
    if (!driver.gate) return this.dispatch(request);
    let verdict: ReturnType<NonNullable<typeof driver.gate>>;
    try {
      verdict = driver.gate(request, this);
    } catch (err) {
      return this.failed(request, err);
    }
    if (verdict === false) return;
    if (!isPromise(verdict)) return this.dispatch(request);
    verdict.then((pass) => { if (pass !== false) this.dispatch(request); }, (err: unknown) => this.failed(request, err));
  }

  private failed(request: GatedRequest, err: unknown): void {
    this.finish(request, this.internalError(request, err));
  }

  private dispatch(request: GatedRequest): void {
    if (this.closed) return;
    const outcome = this.execute(request);
    if (isPromise(outcome)) outcome.then((settled) => this.finish(request, settled));
    else this.finish(request, outcome);
  }

  private finish(request: GatedRequest, outcome: Outcome): void {
    if (outcome === DROPPED || this.closed) return;
    this.server.driver.observe?.answered?.(String(request.cmd), 'error' in outcome, this);
    this.send(stringifyJson(outcome));
    const snapshot = this.snapshot;
    if (snapshot !== null && 'result' in outcome && request.cmd === 'login') {
      this.snapshot = null;
      void this.streamResync(snapshot);
    }
  }

  /** The answer to `request`, or a promise of it; never throws or rejects. */
  private execute(request: GatedRequest): Outcome | Promise<Outcome> {
    const { id, cmd } = request;
    const codes = this.server.codes;
    const answer = (value: unknown): Answer => ({ id, result: value === undefined ? null : value });
    try {
      if (typeof cmd !== 'string' || cmd.length === 0) throw new ResultError(codes.badArgs, 'cmd must be a non-empty string');
      const raw = request.args ?? {};
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ResultError(codes.badArgs, 'args must be an object');
      const args = raw as Record<string, unknown>;
      if (cmd === 'login') return this.settle(request, this.startLogin(args), answer);
      if (!this.loggedIn) throw new ResultError(codes.noRights, `${named(cmd)} needs a logged-in manager session`);
      if (cmd === 'Ping') return answer({ time: new Date().toISOString() });
      const handler = this.server.handler(cmd);
      if (!handler) throw new ResultError(codes.badArgs, `unknown command ${named(cmd)}`);
      const refusal = this.server.driver.authorize?.(cmd, args, this);
      if (refusal) {
        if (refusal.drop) {
          this.close(CLOSE_CODES.rightDropped, refusal.message);
          return DROPPED;
        }
        throw new ResultError(refusal.code ?? codes.noRights, refusal.message);
      }
      return this.settle(request, handler(args, this), answer);
    } catch (err) {
      return this.internalError(request, err);
    }
  }

  /** Turns a handler's value (or its promise) into its answer. */
  private settle<T>(request: GatedRequest, value: T | Promise<T>, toAnswer: (value: T) => Answer): Answer | Promise<Answer> {
    if (!isPromise(value)) return toAnswer(value);
    return value.then(toAnswer, (err: unknown) => this.internalError(request, err));
  }

  private internalError(request: GatedRequest, err: unknown): Answer {
    const { id, cmd } = request;
    if (err instanceof ResultError) return { id, error: { code: err.code, message: err.message } };
    this.server.log({ msg: 'command failed', server: this.server.name, cmd: named(String(cmd)), error: (err as Error)?.message ?? String(err) });
    return { id, error: { code: this.server.codes.internal, message: `internal error in ${named(String(cmd))}` } };
  }

  /** The login's result, or its promise when the driver authenticates asynchronously. */
  private startLogin(raw: Record<string, unknown>): LoginResult | Promise<LoginResult> {
    const codes = this.server.codes;
    if (this.loggedIn || this.loginPending) throw new ResultError(codes.badArgs, 'this session is already logged in');
    const checked = checkLogin(raw, codes.badArgs);
    const verdict = this.server.driver.authenticate({ login: checked.login, password: checked.password, peer: this.peer });
    if (!isPromise(verdict)) return this.decideLogin(checked, verdict);
    this.loginPending = true;
    return verdict.finally(() => { this.loginPending = false; }).then((decided) => {
      // Gone while the driver decided: nothing is committed, and nothing is sent.
      if (this.closed) throw new ResultError(codes.badArgs, 'the connection closed during the login');
      return this.decideLogin(checked, decided);
    });
  }

  /** Commits a granted login, taking its snapshot in this turn, or throws the refusal. */
  private decideLogin(checked: CheckedLogin, verdict: LoginVerdict): LoginResult {
    const { driver, name, family } = this.server;
    if (!verdict.ok) {
      driver.observe?.loginRefused?.(checked.login, verdict.code, this);
      this.server.log({ msg: 'manager login refused', server: name, login: checked.login, code: verdict.code, peer: this.peer });
      throw new ResultError(verdict.code, verdict.message);
    }
    const result: LoginResult = {
      version: checked.version, server: name, family, build: driver.build, rights: [...verdict.rights],
      capabilities: { commands: [...this.server.commandNames], events: [...driver.events] },
    };
    const shaped = loginResultSchema.safeParse(result);
    if (!shaped.success) {
      const issue = shaped.error.issues[0];
      throw new Error(`the login answer breaks LoginResult at ${issue.path.join('.')}: ${issue.message}`);
    }
    this.login = checked.login;
    this.rights = new Set(verdict.rights);
    this.pumping = checked.pump;
    // Held from this moment: the snapshot is of now, and every change from here on comes after its end.
    this.resyncing = checked.pump;
    if (checked.pump) {
      try {
        const taken = driver.snapshot(this);
        if (isPromise(taken)) taken.catch(() => {}); // its failure is handled where it is awaited, or nowhere once closed
        this.snapshot = isPromise(taken) ? taken : orderSnapshot(family, driver.events, taken);
      } catch (err) {
        this.login = null;
        this.rights = new Set();
        this.pumping = false;
        this.resyncing = false;
        this.heldEvents = [];
        this.heldKeyed.clear();
        this.coalescedKeys.clear();
        throw err;
      }
    }
    driver.observe?.loggedIn?.(this);
    this.server.log({ msg: 'manager logged in', server: name, login: checked.login, pump: this.pumping, peer: this.peer });
    return result;
  }

  private async streamResync(taken: SnapshotPart[] | Promise<SnapshotPart[]>): Promise<void> {
    const { name, family, driver } = this.server;
    let parts: SnapshotPart[];
    try {
      parts = isPromise(taken) ? orderSnapshot(family, driver.events, await taken) : taken;
    } catch (err) {
      this.server.log({ msg: 'snapshot failed, closing session', server: name, peer: this.peer, error: (err as Error)?.message ?? String(err) });
      this.close(CLOSE_SNAPSHOT_FAILED, 'the snapshot failed');
      return;
    }
    if (this.closed) return;
    const counts: Record<string, number> = {};
    for (const part of parts) counts[part.kind] = part.rows.length;
    this.send(JSON.stringify({ event: 'resync', op: 'begin', record: { server: name, family } }));
    for (const part of parts) {
      const toWire = (part.toWire ?? ((row: unknown) => row)) as (row: unknown) => unknown;
      for (let offset = 0; offset < part.rows.length; offset += RESYNC_CHUNK) {
        if (!(await this.writable())) return;
        const items = part.rows.slice(offset, offset + RESYNC_CHUNK).map((row) => toWire(row));
        this.send(stringifyJson({ event: 'resync', op: 'chunk', record: { kind: part.kind, items } }));
      }
    }
    if (!(await this.writable())) return;
    this.send(JSON.stringify({ event: 'resync', op: 'end', record: { counts } }));
    this.resyncing = false;
    if (!this.server.holding) this.releaseHeld();
  }

  /** Waits until the socket has room and the server holds nothing back; false once the session is gone. */
  private async writable(): Promise<boolean> {
    while (!this.closed && (this.ws.bufferedAmount > this.server.limits.resyncHighWater || this.server.holding)) {
      await new Promise((resolve) => setTimeout(resolve, RESYNC_POLL_MS));
    }
    return !this.closed;
  }

  private releaseHeld(): void {
    const events = this.heldEvents;
    const keyed = this.heldKeyed;
    const coalesced = this.coalescedKeys;
    this.heldEvents = [];
    this.heldKeyed = new Map();
    this.coalescedKeys = new Set();
    for (const text of events) this.sendLive(text);
    for (const text of keyed.values()) this.sendLive(text);
    const summaryOf = this.server.driver.coalescedSummary;
    if (!summaryOf) return;
    for (const key of coalesced) {
      const summary = summaryOf.call(this.server.driver, key);
      if (summary) this.sendLive(stringifyJson({ event: summary.kind satisfies ChangeKind, op: summary.op, record: summary.record }));
    }
  }

  private sendLive(text: string): void {
    if (this.closed) return;
    if (this.ws.bufferedAmount > this.server.limits.maxBuffered) {
      this.server.log({ msg: 'manager too slow, closing session', server: this.server.name, peer: this.peer });
      this.close(CLOSE_CODES.tooSlow, 'consumer too slow');
      return;
    }
    this.server.driver.observe?.eventSent?.(this);
    this.send(text);
  }

  private send(text: string): void {
    if (this.closed || this.ws.readyState !== this.ws.OPEN) return;
    this.hold();
    this.ws.send(text);
  }
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** A command name as repeated in a message: cut to MAX_NAMED characters. */
function named(cmd: string): string {
  return cmd.length > MAX_NAMED ? `${cmd.slice(0, MAX_NAMED)}…` : cmd;
}

/** A close reason cut to what a close frame carries. */
function closeReason(reason: string): string {
  if (Buffer.byteLength(reason) <= MAX_CLOSE_REASON_BYTES) return reason;
  let cut = reason.slice(0, MAX_CLOSE_REASON_BYTES);
  while (Buffer.byteLength(cut) > MAX_CLOSE_REASON_BYTES - 3) cut = cut.slice(0, -1);
  return `${cut}…`;
}
