/**
 * One manager connection to a bridged trading server: login first (arguments checked, a protocol version chosen, the
 * driver's verdict), then command dispatch, the snapshot of a pumping login streamed with backpressure, the live
 * change stream after it, and any new snapshot the server starts in mid-session (`resync`).
 *
 * Invariants:
 * - Every request gets at most one answer, `{id, result}` or `{id, error: {code, message}}`, `id` written first; a
 *   request is left unanswered only when the connection is gone, the gate swallowed it, or `authorize` dropped the
 *   connection (1008). A request arriving while `maxInFlight` others wait for their answers is answered at once with
 *   the family's too-frequent code.
 * - Change events are held from the moment a snapshot is taken (a pumping login's when the login is decided, before
 *   its answer is sent; a mid-session one when it starts) until its `end`, and while the server holds them
 *   (`BridgedServer.hold`); released in order, held events first, then the last event of each coalesced key, then
 *   each coalesced key's summary. A new event waits behind held ones, so none overtakes another. Every event after
 *   `end` is newer than the snapshot: a mid-session snapshot is taken only when nothing is held and no other snapshot
 *   streams, so at most one `begin` is open at a time.
 * - A session past its limits (bytes queued while live, events or bytes of events held, a snapshot not read) is
 *   closed with CLOSE_CODES.tooSlow; a connection not logged in by the deadline, or after too many refused logins,
 *   with CLOSE_CODES.loginPolicy; a frame that is not JSON text or a request without a numeric id with
 *   CLOSE_CODES.badFrame.
 * - Nothing the driver throws escapes to the event loop: a failed snapshot or release of held events closes the
 *   session with CLOSE_CODES.snapshotFailed, a throwing observer hook is logged and ignored. Log lines name a failure
 *   by its class where its text could hold records or credentials (the snapshot, the login): never the password.
 */
import type { WebSocket } from 'ws';
import {
  CLOSE_CODES,
  type ChangeKind,
  type LoginResult,
  loginResultSchema,
  RESYNC_CHUNK,
} from '../../shared/protocol.js';
import { parseJson, stringifyJson } from '../../shared/losslessJson.js';
import { writeBatch, type Corkable } from '../../shared/writeBatch.js';
import type { BridgedServer } from './bridgedServer.js';
import type { GatedRequest, LoginVerdict, Observer, Session, SnapshotPart } from './driver.js';
import { errorClass } from './errorClass.js';
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
  /** A snapshot is taken and not yet ended: change events are held. */
  private resyncing = false;
  /** The server asked for a new snapshot; it starts once nothing is held and none streams. */
  private resyncWanted = false;
  private closed = false;
  /** The snapshot of a pumping login, taken when the login was decided, sent once its answer is out. */
  private snapshot: SnapshotPart[] | Promise<SnapshotPart[]> | null = null;
  private heldEvents: string[] = [];
  private heldKeyed = new Map<string, string>();
  /** Bytes of the held events' text (a coalesced key at its last). */
  private heldBytes = 0;
  /** Keys with more than one event held: some were coalesced away. */
  private coalescedKeys = new Set<string>();
  /** Requests taken and not yet answered (or swallowed). */
  private inFlight = 0;
  private refusedLogins = 0;
  private loginTimer: ReturnType<typeof setTimeout> | undefined;
  /** Before each send: the frames of one turn (answers of one batch, a release of held events) leave in one write. */
  private readonly hold: () => void;

  constructor(
    private readonly server: BridgedServer<S>,
    private readonly ws: WebSocket,
    readonly peer: string,
    socket?: Corkable,
  ) {
    this.hold = socket ? writeBatch(socket) : () => {};
    ws.on('message', (data, isBinary) => this.onFrame((data as Buffer).toString(), isBinary)); // default binaryType: a Buffer
    ws.on('close', () => this.onClosed());
    ws.on('error', (err) => this.server.log({ msg: 'manager socket error', server: server.name, error: err.message }));
    const { loginDeadlineMs } = server.limits;
    this.loginTimer = setTimeout(() => {
      this.server.log({
        msg: 'no login within the deadline, closing',
        server: server.name,
        peer,
        deadlineMs: loginDeadlineMs,
      });
      this.close(CLOSE_CODES.loginPolicy, `no login within ${loginDeadlineMs} ms`);
    }, loginDeadlineMs);
    this.loginTimer.unref?.();
    this.state = undefined as S;
    if (server.driver.openSession) {
      try {
        this.state = server.driver.openSession(this);
      } catch (err) {
        this.server.log({
          msg: 'opening a session failed, closing',
          server: server.name,
          peer,
          error: errorClass(err),
        });
        this.close(CLOSE_SNAPSHOT_FAILED, 'the session could not be opened');
      }
    }
  }

  get loggedIn(): boolean {
    return this.login !== null;
  }

  /** Whether the connection is still served (false once closed, also when opening it failed). */
  get open(): boolean {
    return !this.closed;
  }

  /**
   * Streams a fresh snapshot to this session, holding change events from its start until its end, as after the login
   * (a bridge whose link to its trading server was re-established, its state possibly lost). It starts at once, or
   * when the snapshot streaming now has ended and the server's hold is over; asked for several times meanwhile, one
   * snapshot follows. False for a session that does not pump (not logged in with `pump`, or gone): nothing is sent.
   */
  resync(): boolean {
    if (this.closed || !this.pumping) return false;
    this.resyncWanted = true;
    this.startWantedResync();
    return true;
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
      this.heldBytes += Buffer.byteLength(text);
      if (key === undefined) this.heldEvents.push(text);
      else {
        const replaced = this.heldKeyed.get(key);
        if (replaced !== undefined) {
          this.coalescedKeys.add(key);
          this.heldBytes -= Buffer.byteLength(replaced);
        }
        this.heldKeyed.set(key, text);
      }
      const { maxHeldEvents, maxHeldBytes } = this.server.limits;
      if (this.heldEvents.length + this.heldKeyed.size > maxHeldEvents) {
        this.server.log({ msg: 'too many held events, closing session', server: this.server.name, peer: this.peer });
        this.close(CLOSE_CODES.tooSlow, 'too many pending events');
      } else if (this.heldBytes > maxHeldBytes) {
        this.server.log({
          msg: 'too many bytes of held events, closing session',
          server: this.server.name,
          peer: this.peer,
        });
        this.close(CLOSE_CODES.tooSlow, 'too many pending event bytes');
      }
      return;
    }
    this.sendLive(text);
  }

  /** The server's hold ended: release what was held, unless the snapshot still streams (its end releases them). */
  released(): void {
    if (!this.closed && !this.resyncing && !this.server.holding) this.release();
  }

  private onClosed(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.loginTimer);
    this.dropHeld();
    this.snapshot = null;
    this.resyncWanted = false;
    this.server.detach(this);
  }

  private dropHeld(): void {
    this.heldEvents = [];
    this.heldKeyed = new Map();
    this.coalescedKeys = new Set();
    this.heldBytes = 0;
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
    const { maxInFlight } = this.server.limits;
    if (this.inFlight >= maxInFlight) {
      this.finish(request, {
        id: request.id,
        error: {
          code: this.server.codes.tooFrequent,
          message: `more than ${maxInFlight} requests in flight on this session: wait for answers before sending more`,
        },
      });
      return;
    }
    this.inFlight++;
    const { driver } = this.server;
    if (!driver.gate) return this.dispatch(request);
    let verdict: ReturnType<NonNullable<typeof driver.gate>>;
    try {
      verdict = driver.gate(request, this);
    } catch (err) {
      return this.failed(request, err);
    }
    if (verdict === false) return this.swallowed();
    if (!isPromise(verdict)) return this.dispatch(request);
    verdict.then(
      (pass) => (pass === false ? this.swallowed() : this.dispatch(request)),
      (err: unknown) => this.failed(request, err),
    );
  }

  /** The gate swallowed a request: it waits for nothing any more. */
  private swallowed(): void {
    this.inFlight--;
  }

  private failed(request: GatedRequest, err: unknown): void {
    this.answered(request, this.internalError(request, err));
  }

  private dispatch(request: GatedRequest): void {
    if (this.closed) return;
    const outcome = this.execute(request);
    if (isPromise(outcome))
      void outcome.then((settled) => this.answered(request, settled)); // settle's promise never rejects
    else this.answered(request, outcome);
  }

  /** A request taken in flight has its outcome. */
  private answered(request: GatedRequest, outcome: Outcome): void {
    this.inFlight--;
    this.finish(request, outcome);
  }

  private finish(request: GatedRequest, outcome: Outcome): void {
    if (outcome === DROPPED || this.closed) return;
    let text: string;
    try {
      text = stringifyJson(outcome);
    } catch (err) {
      // A handler's result that is not JSON (a cycle): answered as any other unexpected failure of the command.
      const failed = this.internalError(request, err);
      outcome = failed;
      text = stringifyJson(failed);
    }
    this.observe('answered', (o) => o.answered?.(String(request.cmd), 'error' in outcome, this));
    this.send(text);
    if (request.cmd !== 'login') return;
    const snapshot = this.snapshot;
    if (snapshot !== null && 'result' in outcome) {
      this.snapshot = null;
      void this.streamResync(snapshot);
    } else if (this.refusedLogins >= this.server.limits.maxFailedLogins && 'error' in outcome) {
      this.server.log({
        msg: 'too many refused logins, closing',
        server: this.server.name,
        peer: this.peer,
        refused: this.refusedLogins,
      });
      this.close(CLOSE_CODES.loginPolicy, 'too many refused logins');
    }
  }

  /** Calls an observer hook; one that throws is logged and ignored. */
  private observe(hook: keyof Observer<S>, call: (observer: Observer<S>) => void): void {
    const observer = this.server.driver.observe;
    if (!observer?.[hook]) return;
    try {
      call(observer);
    } catch (err) {
      this.server.log({ msg: 'observer hook failed', server: this.server.name, hook, error: errorClass(err) });
    }
  }

  /** The answer to `request`, or a promise of it; never throws or rejects. */
  private execute(request: GatedRequest): Outcome | Promise<Outcome> {
    const { id, cmd } = request;
    const codes = this.server.codes;
    const answer = (value: unknown): Answer => ({ id, result: value === undefined ? null : value });
    try {
      if (typeof cmd !== 'string' || cmd.length === 0)
        throw new ResultError(codes.badArgs, 'cmd must be a non-empty string');
      const raw = request.args ?? {};
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
        throw new ResultError(codes.badArgs, 'args must be an object');
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
  private settle<T>(
    request: GatedRequest,
    value: T | Promise<T>,
    toAnswer: (value: T) => Answer,
  ): Answer | Promise<Answer> {
    if (!isPromise(value)) return toAnswer(value);
    return value.then(toAnswer, (err: unknown) => this.internalError(request, err));
  }

  private internalError(request: GatedRequest, err: unknown): Answer {
    const { id, cmd } = request;
    if (err instanceof ResultError) return { id, error: { code: err.code, message: err.message } };
    // A login's exception may carry its credentials (an authenticate that repeats what it was given): its class only.
    const error = cmd === 'login' ? errorClass(err) : ((err as Error)?.message ?? String(err));
    this.server.log({ msg: 'command failed', server: this.server.name, cmd: named(String(cmd)), error });
    return { id, error: { code: this.server.codes.internal, message: `internal error in ${named(String(cmd))}` } };
  }

  /** The login's result, or its promise when the driver authenticates asynchronously. */
  private startLogin(raw: Record<string, unknown>): LoginResult | Promise<LoginResult> {
    const codes = this.server.codes;
    if (this.loggedIn || this.loginPending) throw new ResultError(codes.badArgs, 'this session is already logged in');
    const checked = checkLogin(raw, codes.badArgs);
    const verdict = this.server.driver.authenticate({
      login: checked.login,
      password: checked.password,
      peer: this.peer,
    });
    if (!isPromise(verdict)) return this.decideLogin(checked, verdict);
    this.loginPending = true;
    return verdict
      .finally(() => {
        this.loginPending = false;
      })
      .then((decided) => {
        // Gone while the driver decided: nothing is committed, and nothing is sent.
        if (this.closed) throw new ResultError(codes.badArgs, 'the connection closed during the login');
        return this.decideLogin(checked, decided);
      });
  }

  /** Commits a granted login, taking its snapshot in this turn, or throws the refusal. */
  private decideLogin(checked: CheckedLogin, verdict: LoginVerdict): LoginResult {
    const { driver, name, family } = this.server;
    if (!verdict.ok) {
      this.refusedLogins++;
      this.observe('loginRefused', (o) => o.loginRefused?.(checked.login, verdict.code, this));
      this.server.log({
        msg: 'manager login refused',
        server: name,
        login: checked.login,
        code: verdict.code,
        peer: this.peer,
      });
      throw new ResultError(verdict.code, verdict.message);
    }
    const result: LoginResult = {
      version: checked.version,
      server: name,
      family,
      build: driver.build,
      rights: [...verdict.rights],
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
        this.dropHeld();
        throw err;
      }
    }
    clearTimeout(this.loginTimer);
    this.observe('loggedIn', (o) => o.loggedIn?.(this));
    this.server.log({
      msg: 'manager logged in',
      server: name,
      login: checked.login,
      pump: this.pumping,
      peer: this.peer,
    });
    return result;
  }

  /** Takes the snapshot the server asked for, once nothing is held and no other snapshot streams. */
  private startWantedResync(): void {
    if (!this.resyncWanted || this.closed || !this.pumping || this.resyncing || this.server.holding) return;
    if (this.heldEvents.length > 0 || this.heldKeyed.size > 0) return;
    this.resyncWanted = false;
    // Held from this moment, as after a login: every change from here on comes after the snapshot's end.
    this.resyncing = true;
    let taken: SnapshotPart[] | Promise<SnapshotPart[]>;
    try {
      taken = this.server.driver.snapshot(this);
    } catch (err) {
      this.snapshotFailed('taking the snapshot', undefined, err);
      return;
    }
    void this.streamResync(taken);
  }

  /** Streams a snapshot, then releases what was held; any failure closes the session (1011). Never rejects. */
  private async streamResync(taken: SnapshotPart[] | Promise<SnapshotPart[]>): Promise<void> {
    const { name, family, driver } = this.server;
    let stage = 'reading the snapshot';
    let kind: string | undefined;
    try {
      const parts = orderSnapshot(family, driver.events, isPromise(taken) ? await taken : taken);
      if (this.closed) return;
      const counts: Record<string, number> = {};
      for (const part of parts) counts[part.kind] = part.rows.length;
      this.send(JSON.stringify({ event: 'resync', op: 'begin', record: { server: name, family } }));
      stage = 'sending a chunk';
      for (const part of parts) {
        kind = part.kind;
        const toWire = (part.toWire ?? ((row: unknown) => row)) as (row: unknown) => unknown;
        for (let offset = 0; offset < part.rows.length; offset += RESYNC_CHUNK) {
          if (!(await this.writable())) return;
          const items = part.rows.slice(offset, offset + RESYNC_CHUNK).map((row) => toWire(row));
          this.send(stringifyJson({ event: 'resync', op: 'chunk', record: { kind: part.kind, items } }));
        }
      }
      kind = undefined;
      stage = 'ending the snapshot';
      if (!(await this.writable())) return;
      this.send(JSON.stringify({ event: 'resync', op: 'end', record: { counts } }));
    } catch (err) {
      this.snapshotFailed(stage, kind, err);
      return;
    }
    this.resyncing = false;
    if (!this.server.holding) this.release();
  }

  private snapshotFailed(stage: string, kind: string | undefined, err: unknown): void {
    this.server.log({
      msg: 'snapshot failed, closing session',
      server: this.server.name,
      peer: this.peer,
      stage,
      kind,
      error: errorClass(err),
    });
    this.close(CLOSE_SNAPSHOT_FAILED, 'the snapshot failed');
  }

  /**
   * Waits until the socket has room and the server holds nothing back; false once the session is gone, or closed
   * because the socket has not drained at all for `snapshotStallMs` (a peer that stopped reading).
   */
  private async writable(): Promise<boolean> {
    const { resyncHighWater, snapshotStallMs } = this.server.limits;
    let queued = this.ws.bufferedAmount;
    let since = Date.now();
    while (!this.closed && (this.ws.bufferedAmount > resyncHighWater || this.server.holding)) {
      const now = Date.now();
      const drained = this.ws.bufferedAmount < queued;
      queued = this.ws.bufferedAmount;
      // Progress is the socket draining at all since the last look (answers sent meanwhile only add to it).
      if (this.server.holding || drained) since = now;
      else if (now - since > snapshotStallMs) {
        this.server.log({
          msg: 'snapshot not read, closing session',
          server: this.server.name,
          peer: this.peer,
          stallMs: snapshotStallMs,
        });
        this.close(CLOSE_CODES.tooSlow, 'the snapshot is not being read');
        return false;
      }
      await new Promise((resolve) => setTimeout(resolve, RESYNC_POLL_MS));
    }
    return !this.closed;
  }

  /** Sends what was held; a failure (a driver's summary) closes the session (1011). Then a wanted snapshot starts. */
  private release(): void {
    try {
      this.releaseHeld();
    } catch (err) {
      this.server.log({
        msg: 'releasing held events failed, closing session',
        server: this.server.name,
        peer: this.peer,
        error: errorClass(err),
      });
      this.close(CLOSE_SNAPSHOT_FAILED, 'the held events could not be sent');
      return;
    }
    this.startWantedResync();
  }

  private releaseHeld(): void {
    const events = this.heldEvents;
    const keyed = this.heldKeyed;
    const coalesced = this.coalescedKeys;
    this.dropHeld();
    for (const text of events) this.sendLive(text);
    for (const text of keyed.values()) this.sendLive(text);
    const driver = this.server.driver;
    if (!driver.coalescedSummary) return;
    for (const key of coalesced) {
      const summary = driver.coalescedSummary(key);
      if (summary)
        this.sendLive(
          stringifyJson({ event: summary.kind satisfies ChangeKind, op: summary.op, record: summary.record }),
        );
    }
  }

  private sendLive(text: string): void {
    if (this.closed) return;
    if (this.ws.bufferedAmount > this.server.limits.maxBuffered) {
      this.server.log({ msg: 'manager too slow, closing session', server: this.server.name, peer: this.peer });
      this.close(CLOSE_CODES.tooSlow, 'consumer too slow');
      return;
    }
    this.observe('eventSent', (o) => o.eventSent?.(this));
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
