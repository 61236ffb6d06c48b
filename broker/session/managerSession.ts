/**
 * One manager session per trade platform: a WebSocket to the trading server speaking the manager protocol
 * (`shared/protocol.ts`), logged in with the platform's manager credentials and asking for the change stream.
 *
 * The session keeps itself alive (a protocol `Ping` every `pingIntervalMs`, 5 s by default; a ping unanswered for
 * `pingTimeoutMs`, 5 s by default, with no other frame since it was sent means the link is dead even if TCP has not
 * noticed: a frozen server is declared dead, and its platform down, within interval + timeout of its last frame) and
 * reconnects on its own with exponential backoff and full jitter. A request that arrives while the session is down
 * does not wait for the backoff timer: it starts a fresh connect and login at once, bounded by its own deadline, so
 * "after a dropped connection the next request logs in afresh". Requests in flight when the socket drops fail at once
 * with `NoConnect`: their outcome on the server is unknown to us.
 *
 * A cold standby's session logs out when idle (`logout`): the connection closes and nothing reconnects it until it
 * is started again.
 *
 * The login's answer is checked before the session is up (`checkLoginAnswer`: protocol version, family, build, rights,
 * the keep-alive among the commands). A refused answer ends the connection: the session stays down with the refusal as
 * its `lastError`, counted by reason (`loginRefusals`), and reconnects with the usual backoff; events the server sent
 * before the refusal never reach the cache. What the latest accepted login declared (`declared`) is kept across drops
 * until the next login: a command it did not declare is refused before anything is sent (`undeclared`), with no
 * fair-use place taken and no time-out.
 *
 * Bounds: a request frame is at most REQUEST_MAX_BYTES, what every trading server must accept (a larger one would make
 * the server close the connection, failing every caller's request in flight): a larger request is refused as
 * `Validation` before anything is sent, the session untouched. Events that come before the login answer is accepted are
 * held within HELD_EVENTS_BOUND; past it the connection is terminated, the session down saying why. Nothing the trading
 * server says reaches `lastError`, the log or a caller with the platform's password in it: it reads `***`.
 */
import WebSocket from 'ws';
import { OperationError } from '../../shared/errors.js';
import type { ChangeKind, Family, LoginArgs, LoginResult, ManagerEvent } from '../../shared/protocol.js';
import { isAnswer, isEvent, PROTOCOL_VERSIONS, SERVER_MIN_FRAME_BYTES } from '../../shared/protocol.js';
import type { Logger } from '../observability/log.js';
import { silentLogger } from '../observability/log.js';
import { backoffDelay, DEFAULT_BACKOFF, type BackoffPolicy } from './backoff.js';
import { checkLoginAnswer, type LoginRefusalReason } from './loginAnswer.js';
import {
  AnswerTooLargeError,
  ConnectionLostError,
  DeadlineError,
  managerFailure,
  tooFrequent,
  undeclaredRefusal,
  type FailureContext,
} from './managerErrors.js';
import { parseJson, stringifyJson } from '../../shared/losslessJson.js';
import { DEFAULT_FAIR_USE, FairUse, FairUseRefusal, type FairUseLimits, type FairUsePlace } from './fairUse.js';

/**
 * What one answer frame of the trading server may take, for an answer of at most `answerMaxBytes` to the edge: twice
 * that (the broker shapes records, drops secrets, renames, before it answers), and never less than
 * ANSWER_FRAME_MIN_BYTES, so that a broker told to answer little still reads what its handlers ask for in one command
 * and cut to fit (a sync read's 5,000 rows, a snapshot it refuses naming how many fit).
 */
export function answerFrameBound(answerMaxBytes: number): number {
  return Math.max(ANSWER_FRAME_MIN_BYTES, 2 * answerMaxBytes);
}

/** The least `answerFrameBound` sets: 64 MiB, a frame parsed in well under the edge's heartbeat timeout. */
export const ANSWER_FRAME_MIN_BYTES = 64 * 1024 * 1024;

/**
 * The largest request frame the broker sends: SERVER_MIN_FRAME_BYTES, what every trading server must accept in one
 * frame (docs/manager-protocol.md, "Frame size limits"). A larger request is refused before it is sent.
 */
export const REQUEST_MAX_BYTES = SERVER_MIN_FRAME_BYTES;

/** What a session holds of the events that come before its login answer is accepted (normally only those right behind it). */
export interface HeldEventsBound {
  frames: number;
  bytes: number;
}

/** 10,000 frames or 64 MiB: far more than a server sends in the same read as its login answer. */
export const HELD_EVENTS_BOUND: Readonly<HeldEventsBound> = { frames: 10_000, bytes: 64 * 1024 * 1024 };

/** What replaces the platform's password in text that came from the trading server. */
export const PASSWORD_MASK = '***';

/**
 * `text` with every occurrence of `password` in it, as it is or as a JSON string writes it (a server quoting the
 * login's arguments back), replaced by `***`. An empty password masks nothing.
 */
export function withoutPassword(text: string, password: string): string {
  if (!password) return text;
  const forms = [...new Set([password, JSON.stringify(password).slice(1, -1)])].sort((a, b) => b.length - a.length);
  let out = text;
  for (const form of forms) out = out.split(form).join(PASSWORD_MASK);
  return out;
}

/** The size of a frame as it arrived. */
function frameBytes(data: WebSocket.RawData): number {
  if (Array.isArray(data)) return data.reduce((n, part) => n + part.length, 0);
  return data.byteLength;
}

/** One entry of the platform file: where the trading server is and how the broker's manager logs in. */
export interface PlatformConfig {
  id: string;
  family: Family;
  server: string;
  login: number;
  password: string;
  /** `hot` (the default): logged in from the start; `cold`: logs in on its first use (`TradePlatform`). */
  standby?: 'hot' | 'cold';
  /** The least trading server build the platform is served from (its login answer's `build`). */
  minBuild?: number;
  /** Rights (by name) the manager must hold, as the login answer's `rights` lists them. */
  requiredRights?: string[];
}

/** What the trading server's latest accepted login declared, for lookups. */
export interface Declared {
  answer: Readonly<LoginResult>;
  commands: ReadonlySet<string>;
  events: ReadonlySet<ChangeKind>;
}

export interface SessionState {
  up: boolean;
  /** When `up` last changed (ISO 8601). */
  since: string;
  lastError: string | null;
}

export interface SessionHooks {
  /** Every change event and resync frame, in arrival order. */
  onEvent(event: ManagerEvent): void;
  /** The socket is gone (after having been opened or not); a resync in progress is void. */
  onDown?(): void;
}

export interface SessionOptions {
  pingIntervalMs?: number;
  /** How long a keep-alive ping may stay unanswered before the connection is declared dead. */
  pingTimeoutMs?: number;
  backoff?: BackoffPolicy;
  /** Upper bound for opening the socket and logging in when no request deadline is shorter. */
  connectTimeoutMs?: number;
  log?: Logger;
  random?: () => number;
  /** How callers share the session (DEFAULT_FAIR_USE). */
  fairUse?: FairUseLimits;
  /**
   * What one answer frame of the trading server may take, in bytes (the broker sets `answerFrameBound` of its answer
   * bound; default MANAGER_MAX_PAYLOAD): a larger answer is not parsed; its request fails as too large (`AnswerTooLargeError`). Events and resync chunks are
   * bounded only by MANAGER_MAX_PAYLOAD.
   */
  maxAnswerFrameBytes?: number;
  /** What is held of the events that come before the login answer is accepted (HELD_EVENTS_BOUND). */
  heldEvents?: HeldEventsBound;
}

/**
 * An absolute deadline, or a split one: send until `sendBy`, wait for the answer until `answerBy` (calls under an
 * Idempotency-Key, whose late answer the broker keeps), with the caller on whose behalf the commands are sent
 * (`CallFrame.client`; the session shares itself fairly between callers, `FairUse`).
 */
export type CallDeadline = number | { sendBy: number; answerBy: number; caller?: string };

interface Pending {
  resolve(result: unknown): void;
  reject(error: Error): void;
  timer: ReturnType<typeof setTimeout> | undefined;
  context: FailureContext;
  /** The caller's place on the wire (`FairUse`), released with the answer's size. */
  place?: FairUsePlace;
}

/** A request frame as the protocol writes it: `{"id":…,"cmd":…,"args":…}`, without args when there are none. */
function requestFrame(id: number, cmd: string, argsText: string | undefined): string {
  return `{"id":${id},"cmd":${JSON.stringify(cmd)}${argsText === undefined ? '' : `,"args":${argsText}`}}`;
}

/**
 * The arguments of a caller's request `cmd` as JSON text, once its frame is known to fit REQUEST_MAX_BYTES (whatever
 * id it gets); a larger one is refused as `Validation`, naming the bound. Arguments that cannot be written as JSON
 * fail as a command that could not be sent.
 */
function requestArgsText(cmd: string, args: Record<string, unknown> | undefined): string | undefined {
  let argsText: string | undefined;
  try {
    argsText = args === undefined ? undefined : stringifyJson(args);
  } catch (error) {
    throw new OperationError('NoConnect', `the command could not be sent: ${(error as Error).message}`);
  }
  const bytes =
    Buffer.byteLength(requestFrame(Number.MAX_SAFE_INTEGER, cmd, argsText === undefined ? undefined : '')) +
    (argsText === undefined ? 0 : Buffer.byteLength(argsText));
  if (bytes > REQUEST_MAX_BYTES) {
    throw new OperationError(
      'Validation',
      `the ${cmd} request to the trading server takes ${bytes} bytes, more than the ${REQUEST_MAX_BYTES} bytes (${REQUEST_MAX_BYTES / (1024 * 1024)} MiB) every trading server must accept in one frame: send less in one call`,
    );
  }
  return argsText;
}

/** Requests arriving this soon after a failed connect share its failure instead of starting another attempt. */
const RETRY_GAP_MS = 100;

/** Resync chunks can be large (thousands of full records); the server is trusted, the edge link is the bounded side. */
const MANAGER_MAX_PAYLOAD = 512 * 1024 * 1024;

export class ManagerSession {
  private socket: WebSocket | undefined;
  private loggedIn = false;
  private connecting: Promise<WebSocket> | undefined;
  private readonly pending = new Map<number, Pending>();
  /** Places of commands whose caller's deadline passed with the command on the wire, by request id (`send`). */
  private readonly unanswered = new Map<number, FairUsePlace>();
  private nextId = 1;
  private attempt = 0;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  /** When the last frame from the trading server arrived (Date.now()), whatever it was. */
  private lastFrameAt = 0;
  private pingTimer: ReturnType<typeof setInterval> | undefined;
  private pingInFlight = false;
  private closed = false;
  /** Logged out on purpose (`logout`): no reconnect until `start`. */
  private loggedOut = false;
  /** The latest accepted login's answer (kept across drops until the next login; none after a refused answer). */
  private declaredNow: Declared | undefined;
  /** The last failed connect attempt, so a burst of requests during an outage does not become a burst of logins. */
  private lastFailure: { at: number; error: Error } | undefined;
  private readonly current: SessionState = { up: false, since: new Date().toISOString(), lastError: null };
  private readonly pingIntervalMs: number;
  private readonly pingTimeoutMs: number;
  private readonly connectTimeoutMs: number;
  private readonly backoff: BackoffPolicy;
  private readonly log: Logger;
  private readonly random: () => number;
  /** Successful logins, for tests and logs. */
  logins = 0;
  /** Connection attempts begun (each opens a socket): the broker is ready once every session has made one. */
  connectAttempts = 0;
  /** Login answers refused, by reason (an answer with several differences counts under each). */
  readonly loginRefusals = new Map<LoginRefusalReason, number>();
  /** How the session is shared between callers. */
  readonly fairUse: FairUse;
  private readonly maxAnswerFrameBytes: number;
  private readonly heldEvents: Readonly<HeldEventsBound>;

  constructor(
    readonly config: PlatformConfig,
    private readonly hooks: SessionHooks,
    options: SessionOptions = {},
  ) {
    this.pingIntervalMs = options.pingIntervalMs ?? 5000;
    this.pingTimeoutMs = options.pingTimeoutMs ?? this.pingIntervalMs;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
    this.backoff = options.backoff ?? DEFAULT_BACKOFF;
    this.log = options.log ?? silentLogger;
    this.random = options.random ?? Math.random;
    this.fairUse = new FairUse(options.fairUse ?? DEFAULT_FAIR_USE);
    this.maxAnswerFrameBytes = options.maxAnswerFrameBytes ?? MANAGER_MAX_PAYLOAD;
    this.heldEvents = options.heldEvents ?? HELD_EVENTS_BOUND;
  }

  get family(): Family {
    return this.config.family;
  }

  get state(): Readonly<SessionState> {
    return this.current;
  }

  get up(): boolean {
    return this.current.up;
  }

  /** What the trading server's latest accepted login declared; undefined before one, or after a refused answer. */
  get declared(): Declared | undefined {
    return this.declaredNow;
  }

  /**
   * The refusal of a call needing `commands` and `events` the latest accepted login did not declare (every missing
   * one named), or undefined when it declared them all, or when no login declared anything yet.
   */
  undeclared(commands: readonly string[], events: readonly ChangeKind[] = []): OperationError | undefined {
    const declared = this.declaredNow;
    if (!declared) return undefined;
    const missingCommands = commands.filter((cmd) => !declared.commands.has(cmd));
    const missingEvents = events.filter((kind) => !declared.events.has(kind));
    if (!missingCommands.length && !missingEvents.length) return undefined;
    return undeclaredRefusal(this.config.family, missingCommands, missingEvents);
  }

  /**
   * Resolves once the session is logged in, connecting first when down, within `deadline` (fails as `request` would:
   * `NoConnect` with the reason, or the deadline). For a check of what the server declared before a call's first
   * command when no login has declared anything yet.
   */
  async whenLoggedIn(deadline: number): Promise<void> {
    if (this.closed) throw new OperationError('NoConnect', 'the manager session is closed');
    if (!(this.socket && this.loggedIn)) await this.connectBy(deadline);
  }

  /** Opens the session in the background; failures are retried with backoff. */
  start(): void {
    this.loggedOut = false;
    this.connect().catch(() => {
      /* logged and retried by the close path */
    });
  }

  /**
   * Sends one command and resolves with its result. `deadline` is absolute (Date.now() based); connecting and logging
   * in first, when needed, spend from the same budget. A split deadline (calls under an Idempotency-Key) sends only
   * until `sendBy` but waits for the answer until `answerBy`, so a late answer still reaches the caller's handler.
   */
  async request(
    cmd: string,
    args: Record<string, unknown> | undefined,
    deadline: CallDeadline,
    context: FailureContext = {},
  ): Promise<unknown> {
    if (this.closed) throw new OperationError('NoConnect', 'the manager session is closed');
    // Before anything else: a command the server said it does not answer takes no place and waits for nothing.
    const undeclared = this.undeclared([cmd]);
    if (undeclared) throw undeclared;
    // Nor does one larger than a server must accept: sent, it would end the connection for every caller.
    const argsText = requestArgsText(cmd, args);
    const {
      sendBy,
      answerBy,
      caller = '',
    } = typeof deadline === 'number' ? { sendBy: deadline, answerBy: deadline } : deadline;
    let taken: FairUsePlace | Promise<FairUsePlace>;
    try {
      taken = this.fairUse.acquire(caller, cmd, sendBy);
    } catch (error) {
      if (!(error instanceof FairUseRefusal)) throw error;
      // Nothing was sent.
      throw tooFrequent(this.config.family, error.message, error.retryAfterSeconds);
    }
    const place = taken instanceof Promise ? await taken : taken;
    let socket: WebSocket;
    try {
      socket = this.socket && this.loggedIn ? this.socket : await this.connectBy(sendBy);
    } catch (error) {
      place.release();
      throw error;
    }
    // A fresh login may have declared less than the one before it.
    const undeclaredNow = this.undeclared([cmd]);
    if (undeclaredNow) {
      place.release();
      throw undeclaredNow;
    }
    // From here the place is the command's until its answer comes, late or not, or its connection is gone (`send`).
    return this.send(socket, cmd, argsText, sendBy, context, answerBy, place);
  }

  /**
   * A keep-alive `Ping` sent now, outside fair use (the session's own), connecting first when down; resolves with its
   * answer. The trading server answers on the socket it sends its events on, so once the answer is here every change
   * it made before the ping came has been received (`TradePlatform.fenceReads`).
   */
  async barrier(deadline: number): Promise<void> {
    if (this.closed) throw new OperationError('NoConnect', 'the manager session is closed');
    if (this.loggedOut) throw new OperationError('NoConnect', 'the manager session is logged out');
    const socket = this.socket && this.loggedIn ? this.socket : await this.connectBy(deadline);
    await this.send(socket, 'Ping', undefined, deadline, {});
  }

  /**
   * Drops the current connection and lets the usual reconnect path log in afresh. Used after a command that makes the
   * server drop its manager connections anyway (SrvRestart): dropping first means no request is sent on a connection
   * that is about to go, so the next request deterministically gets a fresh login.
   */
  reconnect(reason: string): void {
    const socket = this.socket;
    if (!socket || this.closed) return;
    this.current.lastError = reason;
    socket.terminate();
  }

  /**
   * Logs out for now (a cold standby with nothing to do): the connection closes, requests in flight fail as lost, and
   * no reconnect follows until `start`. Resolves once the socket is closed.
   */
  logout(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.loggedOut = true;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const socket = this.socket;
    if (!socket || socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      socket.once('close', () => resolve());
      socket.terminate();
    });
  }

  /** Closes the session for good: no reconnects, every pending request fails. */
  close(): Promise<void> {
    this.closed = true;
    this.fairUse.close(new OperationError('NoConnect', 'the manager session is closed'));
    clearTimeout(this.retryTimer);
    this.stopPing();
    const socket = this.socket;
    if (!socket || socket.readyState === WebSocket.CLOSED) {
      this.failPending('the manager session is closed');
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      socket.once('close', () => resolve());
      socket.terminate();
    });
  }

  private async connectBy(deadline: number): Promise<WebSocket> {
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new DeadlineError();
    if (!this.connecting && this.lastFailure && Date.now() - this.lastFailure.at < RETRY_GAP_MS)
      throw this.lastFailure.error;
    const connecting = this.connect();
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      return await Promise.race([
        connecting,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new DeadlineError()), remaining);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Opens the socket and logs in; concurrent callers share one attempt. */
  private connect(): Promise<WebSocket> {
    if (this.closed) return Promise.reject(new OperationError('NoConnect', 'the manager session is closed'));
    if (this.socket && this.loggedIn) return Promise.resolve(this.socket);
    if (this.connecting) return this.connecting;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const attempt = new Promise<WebSocket>((resolve, reject) => {
      this.connectAttempts++;
      const ws = new WebSocket(this.config.server, {
        handshakeTimeout: this.connectTimeoutMs,
        maxPayload: MANAGER_MAX_PAYLOAD,
        perMessageDeflate: false,
      });
      this.socket = ws;
      this.loggedIn = false;
      /** Events that came before the login answer was accepted: the cache gets them only once it is. */
      let held: ManagerEvent[] | undefined = [];
      let heldBytes = 0;
      /** Why the session ended this connection before its login answer was accepted (too many events held). */
      let ended: string | undefined;
      let settled = false;
      const settle = (error: Error | null) => {
        if (settled) return;
        settled = true;
        // Cleared synchronously so the close path can schedule the next attempt right away.
        if (this.connecting === attempt) this.connecting = undefined;
        this.lastFailure = error ? { at: Date.now(), error } : undefined;
        if (error) reject(error);
        else resolve(ws);
      };
      /** Holds an event of `bytes` until the login answer is accepted; past `heldEvents` the connection ends, saying so. */
      const hold = (event: ManagerEvent, bytes: number) => {
        if (ended !== undefined || !held) return;
        held.push(event);
        heldBytes += bytes;
        const bound = this.heldEvents;
        if (held.length <= bound.frames && heldBytes <= bound.bytes) return;
        ended =
          held.length > bound.frames
            ? `the trading server sent more than ${bound.frames} events before its login answer was accepted`
            : `the trading server sent more than ${bound.bytes} bytes of events before its login answer was accepted`;
        held.splice(0);
        this.current.lastError = `login failed: ${ended}`;
        this.log('error', {
          msg: 'manager login failed',
          platform: this.config.id,
          server: this.config.server,
          error: this.current.lastError,
        });
        settle(new OperationError('NoConnect', `manager login failed: ${ended}`));
        ws.terminate();
      };
      ws.on('open', () => {
        const args: LoginArgs = {
          login: this.config.login,
          password: this.config.password,
          pump: true,
          versions: [...PROTOCOL_VERSIONS],
        };
        this.send(ws, 'login', stringifyJson(args), Date.now() + this.connectTimeoutMs, {})
          .then((result) => {
            if (ended !== undefined) return;
            const check = checkLoginAnswer(result, this.config, args.versions);
            if (!check.ok) {
              // Still held, and dropped with the connection: nothing of a refused server reaches the cache.
              held?.splice(0);
              const message = this.masked(check.message);
              this.refuseLoginAnswer(ws, check.reasons, message);
              settle(new OperationError('NoConnect', `manager login answer refused: ${message}`));
              ws.terminate();
              return;
            }
            const early = held ?? [];
            held = undefined;
            this.onLoggedIn(ws, check.answer);
            settle(null);
            for (const event of early) this.hooks.onEvent(event);
          })
          .catch((error: Error) => {
            if (ended !== undefined) return;
            // The refusal is the server's text, which may quote the login's arguments back.
            const message =
              error instanceof DeadlineError
                ? 'login not answered in time'
                : `login failed: ${this.masked(error.message)}`;
            this.current.lastError = message;
            this.log('warn', {
              msg: 'manager login failed',
              platform: this.config.id,
              server: this.config.server,
              error: message,
            });
            settle(
              new OperationError(
                'NoConnect',
                `manager ${message}`,
                error instanceof OperationError ? error.managerCode : null,
              ),
            );
            ws.terminate();
          });
      });
      ws.on('message', (data, isBinary) => this.onMessage(data, isBinary, held && hold));
      ws.on('error', (error) => {
        this.current.lastError = this.masked(error.message);
      });
      ws.on('close', () => {
        settle(
          new OperationError(
            'NoConnect',
            `cannot reach the trading server: ${this.current.lastError ?? 'connection closed'}`,
          ),
        );
        this.onClosed(ws);
      });
    });
    this.connecting = attempt;
    return attempt;
  }

  /** Text from the trading server (or about what it sent) as `lastError`, the log and callers may show it: no password. */
  private masked(text: string): string {
    return withoutPassword(text, this.config.password);
  }

  /** A login answer that does not fit the platform: the session stays down saying why, and retries with backoff. */
  private refuseLoginAnswer(ws: WebSocket, reasons: readonly LoginRefusalReason[], message: string): void {
    if (this.socket !== ws) return;
    this.declaredNow = undefined;
    for (const reason of reasons) this.loginRefusals.set(reason, (this.loginRefusals.get(reason) ?? 0) + 1);
    this.current.lastError = message;
    this.log('error', {
      msg: 'manager login answer refused',
      platform: this.config.id,
      server: this.config.server,
      reasons,
      error: message,
    });
  }

  private onLoggedIn(ws: WebSocket, answer: LoginResult): void {
    if (this.socket !== ws) return;
    this.declaredNow = {
      answer,
      commands: new Set(answer.capabilities.commands),
      events: new Set(answer.capabilities.events),
    };
    this.loggedIn = true;
    this.attempt = 0;
    this.logins++;
    this.current.up = true;
    this.current.since = new Date().toISOString();
    this.current.lastError = null;
    this.log('info', { msg: 'manager session up', platform: this.config.id, server: this.config.server });
    this.startPing(ws);
  }

  private onClosed(ws: WebSocket): void {
    if (this.socket !== ws) return;
    this.socket = undefined;
    this.loggedIn = false;
    this.stopPing();
    if (this.current.up && this.loggedOut) {
      this.current.up = false;
      this.current.since = new Date().toISOString();
      this.log('info', { msg: 'manager session logged out', platform: this.config.id, server: this.config.server });
    } else if (this.current.up) {
      this.current.up = false;
      this.current.since = new Date().toISOString();
      this.current.lastError ??= 'connection closed';
      this.log('warn', {
        msg: 'manager session down',
        platform: this.config.id,
        server: this.config.server,
        error: this.current.lastError,
      });
    }
    this.failPending(this.closed ? 'the manager session is closed' : 'the manager connection was lost');
    this.hooks.onDown?.();
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.loggedOut || this.retryTimer || this.connecting) return;
    const delay = backoffDelay(this.attempt++, this.backoff, this.random);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.connect().catch(() => {
        /* the close path schedules the next attempt */
      });
    }, delay);
  }

  /** Sends request `cmd` with its arguments as JSON text (`argsText`, none when undefined). */
  private send(
    ws: WebSocket,
    cmd: string,
    argsText: string | undefined,
    deadline: number,
    context: FailureContext,
    answerBy = deadline,
    place?: FairUsePlace,
  ): Promise<unknown> {
    const now = Date.now();
    if (deadline - now <= 0) {
      place?.release();
      return Promise.reject(new DeadlineError());
    }
    if (ws.readyState !== WebSocket.OPEN) {
      place?.release();
      return Promise.reject(new OperationError('NoConnect', 'the manager connection was lost'));
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        // The command is still the server's to answer: its caller's place stays taken until the answer comes (and is
        // dropped) or the connection goes, so callers who give up early cannot pile work on the server.
        if (place) this.unanswered.set(id, place);
        reject(new DeadlineError('no answer in time', true));
      }, Math.max(deadline, answerBy) - now);
      this.pending.set(id, { resolve, reject, timer, context, place });
      try {
        ws.send(requestFrame(id, cmd, argsText));
      } catch (error) {
        this.pending.delete(id);
        clearTimeout(timer);
        place?.release();
        reject(new OperationError('NoConnect', `the command could not be sent: ${(error as Error).message}`));
      }
    });
  }

  /** One frame from the trading server; events go to `hold` while the login answer is not yet accepted. */
  private onMessage(
    data: WebSocket.RawData,
    isBinary: boolean,
    hold: ((event: ManagerEvent, bytes: number) => void) | undefined,
  ): void {
    this.lastFrameAt = Date.now();
    const bytes = frameBytes(data);
    if (bytes > this.maxAnswerFrameBytes && this.refusedUnread(data, bytes)) return;
    let frame: unknown;
    try {
      // Lossless both ways: PF5 ids beyond 2^53 − 1 are exact bigints here and bare digits on the wire.
      frame = parseJson(isBinary ? Buffer.from(data as Buffer).toString('utf8') : (data as Buffer).toString());
    } catch {
      this.log('warn', { msg: 'unreadable frame from the trading server', platform: this.config.id });
      return;
    }
    if (isAnswer(frame)) {
      const pending = this.answered(frame.id, bytes);
      if (!pending) return;
      if ('error' in frame) pending.reject(managerFailure(this.config.family, frame.error, pending.context));
      else pending.resolve(frame.result);
    } else if (isEvent(frame)) {
      if (hold) hold(frame, bytes);
      else this.hooks.onEvent(frame);
    }
  }

  /**
   * An answer frame past the bound fails its request unread: parsing it would hold the event loop (and every other
   * caller's answers) for as long as its size takes, to make an answer no edge could carry. Only the head of the frame
   * is read, for its id; a frame that is not an answer (an event, a resync chunk) is parsed as usual.
   */
  private refusedUnread(data: WebSocket.RawData, bytes: number): boolean {
    const head = (Array.isArray(data) ? data[0] : Buffer.from(data as Buffer)).subarray(0, 64).toString('latin1');
    const id = /^\s*\{\s*"id"\s*:\s*(\d{1,15})\s*,\s*"(?:result|error|ok)"/.exec(head);
    if (!id) return false;
    this.answered(Number(id[1]), bytes)?.reject(new AnswerTooLargeError(bytes));
    this.log('warn', {
      msg: 'answer from the trading server too large, not read',
      platform: this.config.id,
      bytes,
      bound: this.maxAnswerFrameBytes,
    });
    return true;
  }

  /**
   * The answer of request `id` (of `bytes`) came: its request, taken from those pending with its timer cleared, to be
   * settled; its caller's place given back either way. Undefined when it was answered after its deadline (dropped).
   */
  private answered(id: number, bytes: number): Pending | undefined {
    const pending = this.pending.get(id);
    if (!pending) {
      const place = this.unanswered.get(id);
      this.unanswered.delete(id);
      place?.release(bytes);
      return undefined;
    }
    this.pending.delete(id);
    clearTimeout(pending.timer);
    pending.place?.release(bytes);
    return pending;
  }

  private failPending(message: string): void {
    // Commands past their deadline will never be answered on a new connection either.
    for (const place of this.unanswered.values()) place.release();
    this.unanswered.clear();
    for (const [id, pending] of this.pending) {
      this.pending.delete(id);
      clearTimeout(pending.timer);
      pending.reject(new ConnectionLostError(message));
    }
  }

  private startPing(ws: WebSocket): void {
    this.stopPing();
    this.pingTimer = setInterval(() => {
      if (!this.pingInFlight && this.socket === ws) this.ping(ws);
    }, this.pingIntervalMs);
    this.pingTimer.unref?.();
  }

  /**
   * One keep-alive ping. Unanswered within `pingTimeoutMs`, the connection is dead when no frame at all has arrived
   * since the ping was sent. When frames did arrive (a resync of a large world streams for tens of seconds on the same
   * socket, and the answer queues behind it) the session is alive and is asked again at once, not at the next
   * interval: a server that went silent while that ping was out is then caught by this second one. So a server that
   * stops answering without closing is declared dead at most `max(pingIntervalMs, pingTimeoutMs) + pingTimeoutMs`
   * after its last frame (10 s by default).
   */
  private ping(ws: WebSocket): void {
    this.pingInFlight = true;
    const sentAt = Date.now();
    this.send(ws, 'Ping', undefined, sentAt + this.pingTimeoutMs, {}).then(
      () => {
        this.pingInFlight = false;
      },
      (error: Error) => {
        this.pingInFlight = false;
        if (!(error instanceof DeadlineError) || this.socket !== ws || this.closed) return;
        if (this.lastFrameAt > sentAt) {
          this.ping(ws);
          return;
        }
        this.current.lastError = 'keep-alive ping not answered';
        this.log('warn', { msg: 'keep-alive ping not answered, reconnecting', platform: this.config.id });
        ws.terminate();
      },
    );
  }

  private stopPing(): void {
    clearInterval(this.pingTimer);
    this.pingTimer = undefined;
    this.pingInFlight = false;
  }
}
