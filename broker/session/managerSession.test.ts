/**
 * The manager session in-process, against a fake trading server this file scripts command by command: answer, refuse,
 * stay silent (and answer later by hand), push events as text or binary frames, send unreadable text, close or
 * terminate the connection. Every frame the server receives is recorded as parsed and as sent. Checked: the login
 * (its frame, the state, refusals, time-outs, unreachable servers), requests (frames, ids, results, error mapping,
 * deadlines plain and split, late answers), connecting on demand (one attempt shared, a failure shared for 100 ms),
 * events, the loss of the connection (pending requests, hooks, state, reconnects with backoff, reconnect on demand),
 * the keep-alive ping (asked again at once when frames came while it was out), close(), logout() (a cold standby's:
 * no reconnect until started again), the defaults (10 s to log in, a ping every 5 s given 5 s), the check of the login
 * answer (each difference from the platform's entry keeps the session down, named, with nothing else sent and nothing
 * of the refused server reaching the cache), the refusal of commands the login did not declare, before sending, and
 * the bounds: a request larger than every server must accept is refused unsent, the password never comes back in what
 * the server says, and events held before the login answer is accepted are bounded.
 */
import net, { type AddressInfo } from 'node:net';
import type { IncomingHttpHeaders } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { OperationError } from '../../shared/errors.js';
import { SERVER_MIN_FRAME_BYTES, type Family, type ManagerEvent } from '../../shared/protocol.js';
import { PF4_RESULT, PF5_RESULT } from '../../shared/resultCodes.js';
import type { LogFields, Logger, LogLevel } from '../observability/log.js';
import { AnswerTooLargeError, ConnectionLostError, DeadlineError } from './managerErrors.js';
import {
  ANSWER_FRAME_MIN_BYTES,
  answerFrameBound,
  HELD_EVENTS_BOUND,
  ManagerSession,
  REQUEST_MAX_BYTES,
  withoutPassword,
  type PlatformConfig,
  type SessionHooks,
  type SessionOptions,
  type SessionState,
} from './managerSession.js';

/** Real timers, taken before any test fakes them: the polling below must keep running on the real clock. */
const realSetTimeout = globalThis.setTimeout;
const realSetInterval = globalThis.setInterval;
const realClearInterval = globalThis.clearInterval;

interface Received {
  id: number;
  cmd: string;
  args?: Record<string, unknown>;
}
interface Peer {
  ws: WebSocket;
  url: string;
  headers: IncomingHttpHeaders;
  closed: boolean;
}
interface Arrival {
  frame: Received;
  text: string;
  binary: boolean;
  peer: Peer;
}
type Script = (arrival: Arrival, server: FakeTradingServer) => void;

/** The commands this file's tests send, and the keep-alive. */
const COMMANDS = ['Big', 'Echo', 'Fail', 'Huge', 'Keyed', 'Ping', 'ServerTime', 'Slow'];
const LOGIN_RESULT = {
  version: 1,
  server: 'trading-1',
  family: 'PF4',
  build: 1500,
  rights: ['admin', 'trades'],
  capabilities: { commands: COMMANDS, events: ['users', 'trades'] },
};

const answer =
  (result: unknown): Script =>
  (a, s) =>
    s.reply(a, { id: a.frame.id, result });
const refuse =
  (error: unknown): Script =>
  (a, s) =>
    s.reply(a, { id: a.frame.id, error });
const silent: Script = () => {};
/** The n-th arrival of a command gets the n-th script; the last one goes on for the rest. */
const inTurn = (...scripts: Script[]): Script => {
  let n = 0;
  return (a, s) => scripts[Math.min(n++, scripts.length - 1)](a, s);
};

/** A trading server speaking the manager protocol as each test scripts it. Unscripted commands are never answered. */
class FakeTradingServer {
  readonly arrivals: Arrival[] = [];
  readonly peers: Peer[] = [];
  readonly script = new Map<string, Script>([
    ['login', answer(LOGIN_RESULT)],
    ['Ping', answer({ time: '2024-03-01T10:00:00Z' })],
    ['Echo', (a, s) => s.reply(a, { id: a.frame.id, result: a.frame.args ?? null })],
    // Answers with the error body the request carries.
    ['Fail', (a, s) => s.reply(a, { id: a.frame.id, error: a.frame.args })],
  ]);

  private constructor(private readonly wss: WebSocketServer) {
    wss.on('connection', (ws, req) => {
      const peer: Peer = { ws, url: req.url ?? '', headers: req.headers, closed: false };
      this.peers.push(peer);
      ws.on('close', () => {
        peer.closed = true;
      });
      ws.on('message', (data, binary) => {
        const text = (data as Buffer).toString();
        const arrival: Arrival = { frame: JSON.parse(text) as Received, text, binary, peer };
        this.arrivals.push(arrival);
        this.script.get(arrival.frame.cmd)?.(arrival, this);
      });
    });
  }

  /** A server of `family`: its login answer names it. It reads frames up to `maxPayload` (past it `ws` closes with 1009). */
  static async start(family: Family = 'PF4', maxPayload?: number): Promise<FakeTradingServer> {
    const wss = new WebSocketServer({
      host: '127.0.0.1',
      port: 0,
      ...(maxPayload === undefined ? {} : { maxPayload }),
    });
    await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
    const server = new FakeTradingServer(wss);
    server.script.set('login', answer({ ...LOGIN_RESULT, family }));
    servers.push(server);
    return server;
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.wss.address() as AddressInfo).port}/trading-1`;
  }

  get received(): Received[] {
    return this.arrivals.map((a) => a.frame);
  }

  sent(cmd: string): Arrival[] {
    return this.arrivals.filter((a) => a.frame.cmd === cmd);
  }

  /** Answers on the connection the request came on: an object as JSON text, a string or a buffer as it is. */
  reply(arrival: Arrival, body: object | string): void {
    arrival.peer.ws.send(typeof body === 'string' ? body : JSON.stringify(body));
  }

  /** Sends a frame on the newest connection: an object as JSON text, a string as text, a buffer as a binary frame. */
  push(frame: object | string | Buffer): void {
    const ws = this.peers.at(-1)!.ws;
    ws.send(typeof frame === 'string' || Buffer.isBuffer(frame) ? frame : JSON.stringify(frame));
  }

  /** Terminates every connection without a close frame, like a network failure. */
  drop(): void {
    for (const peer of this.peers) peer.ws.terminate();
  }

  close(): Promise<void> {
    this.drop();
    return new Promise((resolve) => this.wss.close(() => resolve()));
  }
}

const sessions: ManagerSession[] = [];
const servers: Array<{ close(): Promise<void> }> = [];

afterEach(async () => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  // Bounded, so that a session broken by a bad change fails its test instead of hanging the file.
  await Promise.all(
    sessions.splice(0).map((s) => Promise.race([s.close(), new Promise((resolve) => realSetTimeout(resolve, 2000))])),
  );
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const PLATFORM: Record<Family, string> = { PF4: 'pf4-main', PF5: 'pf5-main' };

interface Harness {
  session: ManagerSession;
  events: ManagerEvent[];
  /** The session's state as `onDown` saw it, one entry per call. */
  downs: SessionState[];
  logged: Array<{ level: LogLevel; fields: LogFields }>;
}

function harness(
  server: string,
  options: SessionOptions = {},
  family: Family = 'PF4',
  withOnDown = true,
  entry: Partial<PlatformConfig> = {},
): Harness {
  const events: ManagerEvent[] = [];
  const downs: SessionState[] = [];
  const logged: Harness['logged'] = [];
  const log: Logger = (level, fields) => {
    logged.push({ level, fields });
  };
  const hooks: SessionHooks = {
    onEvent: (event) => {
      events.push(event);
    },
  };
  if (withOnDown)
    hooks.onDown = () => {
      downs.push({ ...session.state });
    };
  const session = new ManagerSession(
    { id: PLATFORM[family], family, server, login: 1000, password: 'manager-pw', ...entry },
    hooks,
    { log, ...options },
  );
  sessions.push(session);
  return { session, events, downs, logged };
}

async function up(t: Harness): Promise<void> {
  t.session.start();
  await until('the session up', () => t.session.up);
}

/** Polls `probe` on the real clock until it holds; fails after `timeoutMs`. */
async function until(what: string, probe: () => unknown, timeoutMs = 5000): Promise<void> {
  const start = performance.now();
  while (!probe()) {
    if (performance.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => realSetTimeout(resolve, 2));
  }
}

function track<T>(promise: Promise<T>): { promise: Promise<T>; settled: boolean } {
  const tracked = { promise, settled: false };
  promise.then(
    () => {
      tracked.settled = true;
    },
    () => {
      tracked.settled = true;
    },
  );
  return tracked;
}

function shape(error: unknown): Record<string, unknown> {
  if (!(error instanceof OperationError)) return { kind: 'not an OperationError', error };
  const kind =
    error instanceof DeadlineError
      ? 'DeadlineError'
      : error instanceof ConnectionLostError
        ? 'ConnectionLostError'
        : 'OperationError';
  return {
    kind,
    code: error.code,
    message: error.message,
    managerCode: error.managerCode,
    ...(error instanceof DeadlineError ? { sent: error.sent } : {}),
  };
}

async function rejection(promise: Promise<unknown>): Promise<Record<string, unknown>> {
  try {
    await promise;
  } catch (error) {
    return shape(error);
  }
  throw new Error('the request did not fail');
}

/** Records the delay of every reconnect timer the session sets. */
function recordRetryDelays(): number[] {
  const delays: number[] = [];
  const original = globalThis.setTimeout;
  vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms?: number, ...rest: unknown[]) => {
    if (new Error().stack?.includes('scheduleReconnect')) delays.push(ms ?? -1);
    return original(fn, ms, ...rest);
  }) as unknown as typeof setTimeout);
  return delays;
}

/** Counts the ticks of the intervals set with period `ms`. */
function countIntervalTicks(ms: number): { count: number } {
  const ticks = { count: 0 };
  const original = globalThis.setInterval;
  vi.spyOn(globalThis, 'setInterval').mockImplementation(((fn: () => void, period?: number, ...rest: unknown[]) =>
    original(
      period === ms
        ? () => {
            ticks.count++;
            fn();
          }
        : fn,
      period,
      ...rest,
    )) as unknown as typeof setInterval);
  return ticks;
}

async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

const loginFrame = (id: number): Received => ({
  id,
  cmd: 'login',
  args: { login: 1000, password: 'manager-pw', pump: true, versions: [1] },
});
const NO_RETRY: SessionOptions = { backoff: { baseMs: 60_000, capMs: 60_000 }, random: () => 0.99 };
const QUICK_RETRY: SessionOptions = { backoff: { baseMs: 1, capMs: 1 }, random: () => 0 };
const DEADLINE_PASSED = {
  kind: 'DeadlineError',
  code: 'NoConnect',
  message: 'deadline passed',
  managerCode: null,
  sent: false,
};
const NO_ANSWER = {
  kind: 'DeadlineError',
  code: 'NoConnect',
  message: 'no answer in time',
  managerCode: null,
  sent: true,
};
const LOST = {
  kind: 'ConnectionLostError',
  code: 'NoConnect',
  message: 'the manager connection was lost',
  managerCode: null,
};
const CLOSED = {
  kind: 'OperationError',
  code: 'NoConnect',
  message: 'the manager session is closed',
  managerCode: null,
};
const REFUSED = {
  kind: 'OperationError',
  code: 'NoConnect',
  message: 'manager login failed: logins refused',
  managerCode: PF4_RESULT.NoConnect,
};
const refuseLogin = refuse({ code: PF4_RESULT.NoConnect, message: 'logins refused' });
const loggedUp = (server: string) => ({
  level: 'info',
  fields: { msg: 'manager session up', platform: 'pf4-main', server },
});
const loggedDown = (server: string, error: string) => ({
  level: 'warn',
  fields: { msg: 'manager session down', platform: 'pf4-main', server, error },
});
const loggedLoginFailed = (server: string, error: string) => ({
  level: 'warn',
  fields: { msg: 'manager login failed', platform: 'pf4-main', server, error },
});
const upAndError = (states: SessionState[]) => states.map(({ up: isUp, lastError }) => ({ up: isUp, lastError }));
const inFiveSeconds = () => Date.now() + 5000;

describe('login', () => {
  it('logs in first with the configured manager, asking for the change stream; the state goes up, then down', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2024-03-01T10:00:00.000Z') });
    const server = await FakeTradingServer.start();
    const t = harness(server.url, NO_RETRY);
    expect(t.session.state).toStrictEqual({ up: false, since: '2024-03-01T10:00:00.000Z', lastError: null });
    expect([t.session.family, t.session.up, t.session.logins]).toStrictEqual(['PF4', false, 0]);

    vi.setSystemTime(new Date('2024-03-01T10:00:01.000Z'));
    await up(t);
    expect(t.session.state).toStrictEqual({ up: true, since: '2024-03-01T10:00:01.000Z', lastError: null });
    expect([t.session.up, t.session.logins]).toStrictEqual([true, 1]);
    expect(server.received).toStrictEqual([loginFrame(1)]);
    expect(server.arrivals.map((a) => [a.text, a.binary])).toStrictEqual([
      ['{"id":1,"cmd":"login","args":{"login":1000,"password":"manager-pw","pump":true,"versions":[1]}}', false],
    ]);
    // The configured URL, and no compression offered.
    expect(server.peers.map((p) => [p.url, p.headers['sec-websocket-extensions']])).toStrictEqual([
      ['/trading-1', undefined],
    ]);
    expect(t.logged).toStrictEqual([loggedUp(server.url)]);
    expect(t.downs).toStrictEqual([]);

    vi.setSystemTime(new Date('2024-03-01T10:00:02.000Z'));
    server.drop();
    await until('the session down', () => !t.session.up);
    const down = { up: false, since: '2024-03-01T10:00:02.000Z', lastError: 'connection closed' };
    expect(t.session.state).toStrictEqual(down);
    expect(t.downs).toStrictEqual([down]);
    expect(t.logged).toStrictEqual([loggedUp(server.url), loggedDown(server.url, 'connection closed')]);
    // Nothing left to drop.
    t.session.reconnect('nothing to drop');
    expect(t.session.state).toStrictEqual(down);
    expect(t.session.logins).toBe(1);
  });

  it('fails with NoConnect keeping the manager code when the login is refused', async () => {
    const server = await FakeTradingServer.start();
    server.script.set('login', refuseLogin);
    const t = harness(server.url, NO_RETRY);
    const { since } = t.session.state;
    expect(await rejection(t.session.request('ServerTime', undefined, inFiveSeconds()))).toStrictEqual(REFUSED);
    const state = { up: false, since, lastError: 'login failed: logins refused' };
    expect(t.session.state).toStrictEqual(state);
    await until('the refused connection closed', () => t.downs.length === 1);
    expect(t.downs).toStrictEqual([state]);
    expect(t.logged).toStrictEqual([loggedLoginFailed(server.url, 'login failed: logins refused')]);
    expect(server.received).toStrictEqual([loginFrame(1)]);
    await until('the server to see the connection closed', () => server.peers[0].closed);
    expect(t.session.logins).toBe(0);
  });

  it('fails with "manager login not answered in time" when the login is not answered within connectTimeoutMs', async () => {
    const server = await FakeTradingServer.start();
    server.script.set('login', silent);
    // Long enough for the opening handshake on a busy machine; the login alone then runs out of it.
    const t = harness(server.url, { ...NO_RETRY, connectTimeoutMs: 400 });
    const { since } = t.session.state;
    expect(await rejection(t.session.request('ServerTime', undefined, inFiveSeconds()))).toStrictEqual({
      kind: 'OperationError',
      code: 'NoConnect',
      message: 'manager login not answered in time',
      managerCode: null,
    });
    expect(t.session.state).toStrictEqual({ up: false, since, lastError: 'login not answered in time' });
    await until('the silent connection closed', () => server.peers[0].closed && t.downs.length === 1);
    expect(t.downs).toStrictEqual([{ up: false, since, lastError: 'login not answered in time' }]);
    expect(t.logged).toStrictEqual([loggedLoginFailed(server.url, 'login not answered in time')]);
    expect(server.received).toStrictEqual([loginFrame(1)]);
  });

  it('fails with "cannot reach the trading server" when the server drops the connection during the login', async () => {
    const server = await FakeTradingServer.start();
    server.script.set('login', (a) => a.peer.ws.terminate());
    const t = harness(server.url, NO_RETRY);
    const { since } = t.session.state;
    expect(await rejection(t.session.request('ServerTime', undefined, inFiveSeconds()))).toStrictEqual({
      kind: 'OperationError',
      code: 'NoConnect',
      message: 'cannot reach the trading server: connection closed',
      managerCode: null,
    });
    // onDown ran as the socket closed, before the login's own failure was known.
    expect(t.downs).toStrictEqual([{ up: false, since, lastError: null }]);
    await until('the login failure noted', () => t.logged.length === 1);
    expect(t.session.state).toStrictEqual({
      up: false,
      since,
      lastError: 'login failed: the manager connection was lost',
    });
    expect(t.logged).toStrictEqual([loggedLoginFailed(server.url, 'login failed: the manager connection was lost')]);
  });

  it('fails with the socket error when nothing listens', async () => {
    const port = await freePort();
    const t = harness(`ws://127.0.0.1:${port}/trading-1`, NO_RETRY);
    const { since } = t.session.state;
    expect(await rejection(t.session.request('ServerTime', undefined, inFiveSeconds()))).toStrictEqual({
      kind: 'OperationError',
      code: 'NoConnect',
      message: `cannot reach the trading server: connect ECONNREFUSED 127.0.0.1:${port}`,
      managerCode: null,
    });
    const state = { up: false, since, lastError: `connect ECONNREFUSED 127.0.0.1:${port}` };
    expect(t.session.state).toStrictEqual(state);
    expect(t.downs).toStrictEqual([state]);
    expect(t.logged).toStrictEqual([]);
  });

  it('gives up the opening handshake after connectTimeoutMs', async () => {
    const sockets: net.Socket[] = [];
    const mute = net.createServer((socket) => {
      sockets.push(socket);
    });
    await new Promise<void>((resolve) => mute.listen(0, '127.0.0.1', () => resolve()));
    servers.push({
      close: () =>
        new Promise((resolve) => {
          for (const s of sockets) s.destroy();
          mute.close(() => resolve());
        }),
    });
    const t = harness(`ws://127.0.0.1:${(mute.address() as AddressInfo).port}/trading-1`, {
      ...NO_RETRY,
      connectTimeoutMs: 100,
    });
    expect(await rejection(t.session.request('ServerTime', undefined, inFiveSeconds()))).toStrictEqual({
      kind: 'OperationError',
      code: 'NoConnect',
      message: 'cannot reach the trading server: Opening handshake has timed out',
      managerCode: null,
    });
    expect(t.session.state.lastError).toBe('Opening handshake has timed out');
    expect(sockets).toHaveLength(1);
  });

  it('opens nothing new when started again while up', async () => {
    const server = await FakeTradingServer.start();
    const t = harness(server.url);
    await up(t);
    t.session.start();
    expect(await t.session.request('Echo', { n: 1 }, inFiveSeconds())).toStrictEqual({ n: 1 });
    expect(server.received).toStrictEqual([loginFrame(1), { id: 2, cmd: 'Echo', args: { n: 1 } }]);
    expect([server.peers.length, t.session.logins]).toStrictEqual([1, 1]);
  });
});

describe('request()', () => {
  it('sends {id, cmd, args} with rising ids, without args when there are none, and resolves with the result', async () => {
    const server = await FakeTradingServer.start();
    server.script.set('ServerTime', answer('2024-03-01T10:00:00Z'));
    server.script.set('Big', (a, s) => s.reply(a, `{"id":${a.frame.id},"result":{"deal":18446744073709551615}}`));
    const t = harness(server.url);
    expect(await t.session.request('Echo', { login: 7, tags: ['a'] }, inFiveSeconds())).toStrictEqual({
      login: 7,
      tags: ['a'],
    });
    expect(await t.session.request('ServerTime', undefined, inFiveSeconds())).toBe('2024-03-01T10:00:00Z');
    expect(await t.session.request('Big', {}, inFiveSeconds())).toStrictEqual({ deal: 18446744073709551615n });
    expect(server.arrivals.map((a) => a.text)).toStrictEqual([
      '{"id":1,"cmd":"login","args":{"login":1000,"password":"manager-pw","pump":true,"versions":[1]}}',
      '{"id":2,"cmd":"Echo","args":{"login":7,"tags":["a"]}}',
      '{"id":3,"cmd":"ServerTime"}',
      '{"id":4,"cmd":"Big","args":{}}',
    ]);
  });

  it('maps PF4 error answers: InvalidData is NotFound only for a keyed read', async () => {
    const server = await FakeTradingServer.start();
    const t = harness(server.url);
    const fail = (error: object, context?: { keyedRead?: boolean }) =>
      rejection(t.session.request('Fail', error as Record<string, unknown>, inFiveSeconds(), context));
    expect(
      await fail({ code: PF4_RESULT.InvalidData, message: 'login 5 not found' }, { keyedRead: true }),
    ).toStrictEqual({ kind: 'OperationError', code: 'NotFound', message: 'login 5 not found', managerCode: 3 });
    expect(await fail({ code: PF4_RESULT.InvalidData, message: 'group is required' })).toStrictEqual({
      kind: 'OperationError',
      code: 'PF4Error',
      message: 'group is required',
      managerCode: 3,
    });
    expect(await fail({ code: PF4_RESULT.InvalidData, message: 'bad' }, { keyedRead: false })).toStrictEqual({
      kind: 'OperationError',
      code: 'PF4Error',
      message: 'bad',
      managerCode: 3,
    });
    expect(await fail({ code: PF4_RESULT.TradeNoMoney, message: 'no money' }, { keyedRead: true })).toStrictEqual({
      kind: 'OperationError',
      code: 'PF4Error',
      message: 'no money',
      managerCode: 134,
    });
    expect(await fail({ code: PF4_RESULT.Error })).toStrictEqual({
      kind: 'OperationError',
      code: 'PF4Error',
      message: 'the trading server refused the request',
      managerCode: 2,
    });
    expect(t.session.up).toBe(true);
  });

  it('maps PF5 error answers: its not-found code is NotFound always', async () => {
    const server = await FakeTradingServer.start('PF5');
    const t = harness(server.url, {}, 'PF5');
    expect(t.session.family).toBe('PF5');
    const fail = (error: object, context?: { keyedRead?: boolean }) =>
      rejection(t.session.request('Fail', error as Record<string, unknown>, inFiveSeconds(), context));
    expect(await fail({ code: PF5_RESULT.ErrNotfound, message: 'order 9 not found' })).toStrictEqual({
      kind: 'OperationError',
      code: 'NotFound',
      message: 'order 9 not found',
      managerCode: 13,
    });
    expect(await fail({ code: PF5_RESULT.UsrLoginExist, message: 'exists' })).toStrictEqual({
      kind: 'OperationError',
      code: 'PF5Error',
      message: 'exists',
      managerCode: 3004,
    });
    expect(await fail({ code: 3, message: 'three' }, { keyedRead: true })).toStrictEqual({
      kind: 'OperationError',
      code: 'PF5Error',
      message: 'three',
      managerCode: 3,
    });
  });

  it('rejects a request whose deadline has come without sending it or connecting for it', async () => {
    const server = await FakeTradingServer.start();
    const t = harness(server.url);
    const before = Date.now();
    const clock = vi.spyOn(Date, 'now').mockReturnValue(before);
    expect(await rejection(t.session.request('Echo', { n: 0 }, before))).toStrictEqual(DEADLINE_PASSED);
    expect(
      await rejection(t.session.request('Echo', { n: 0 }, { sendBy: before, answerBy: before + 5000 })),
    ).toStrictEqual(DEADLINE_PASSED);
    // No socket was opened for them: there is nothing to drop.
    t.session.reconnect('probe');
    expect(t.session.state.lastError).toBe(null);
    clock.mockRestore();

    expect(await t.session.request('Echo', { n: 1 }, inFiveSeconds())).toStrictEqual({ n: 1 });
    const at = Date.now();
    vi.spyOn(Date, 'now').mockReturnValue(at);
    const late = [
      rejection(t.session.request('Echo', { n: 2 }, at)),
      rejection(t.session.request('Echo', { n: 3 }, at - 1)),
      rejection(t.session.request('Echo', { n: 4 }, { sendBy: at, answerBy: at + 5000 })),
    ];
    vi.mocked(Date.now).mockRestore();
    expect(await Promise.all(late)).toStrictEqual([DEADLINE_PASSED, DEADLINE_PASSED, DEADLINE_PASSED]);
    expect(await t.session.request('Echo', { n: 5 }, inFiveSeconds())).toStrictEqual({ n: 5 });
    expect(server.received).toStrictEqual([
      loginFrame(1),
      { id: 2, cmd: 'Echo', args: { n: 1 } },
      { id: 3, cmd: 'Echo', args: { n: 5 } },
    ]);
  });

  it('rejects a request unanswered by its deadline as sent, and drops its late answer', async () => {
    const server = await FakeTradingServer.start();
    server.script.set('Slow', silent);
    const t = harness(server.url);
    await up(t);
    expect(await rejection(t.session.request('Slow', { n: 1 }, Date.now() + 50))).toStrictEqual(NO_ANSWER);
    await until('the slow request at the server', () => server.sent('Slow').length === 1);
    const next = track(t.session.request('Slow', { n: 2 }, inFiveSeconds()));
    await until('the next slow request at the server', () => server.sent('Slow').length === 2);
    const [first, second] = server.sent('Slow');
    server.reply(first, { id: first.frame.id, result: 'late' });
    // Frames arrive in order: once the echo is back, the late answer has been read, and went to nobody.
    expect(await t.session.request('Echo', { n: 3 }, inFiveSeconds())).toStrictEqual({ n: 3 });
    expect(next.settled).toBe(false);
    server.reply(second, { id: second.frame.id, result: 'its own' });
    expect(await next.promise).toBe('its own');
    expect(server.received.map((f) => f.id)).toStrictEqual([1, 2, 3, 4]);
    expect([t.session.up, server.peers.length, t.downs.length]).toStrictEqual([true, 1, 0]);
  });

  it('waits for the answer under a split deadline until answerBy, and times out there as sent', async () => {
    const server = await FakeTradingServer.start();
    server.script.set('Keyed', silent);
    const t = harness(server.url);
    await up(t);
    const sendBy = Date.now() + 40;
    const call = track(t.session.request('Keyed', { n: 1 }, { sendBy, answerBy: Date.now() + 10_000 }));
    await until(
      'sendBy well past, the request at the server',
      () => Date.now() > sendBy + 100 && server.sent('Keyed').length === 1,
    );
    expect(call.settled).toBe(false);
    const [keyed] = server.sent('Keyed');
    server.reply(keyed, { id: keyed.frame.id, result: 'kept' });
    expect(await call.promise).toBe('kept');

    expect(
      await rejection(t.session.request('Keyed', { n: 2 }, { sendBy: Date.now() + 20, answerBy: Date.now() + 80 })),
    ).toStrictEqual(NO_ANSWER);
    expect(server.received).toStrictEqual([
      loginFrame(1),
      { id: 2, cmd: 'Keyed', args: { n: 1 } },
      { id: 3, cmd: 'Keyed', args: { n: 2 } },
    ]);
  });

  it('rejects a request whose deadline passes while logging in; the login goes on', async () => {
    const server = await FakeTradingServer.start();
    server.script.set('login', silent);
    const t = harness(server.url);
    expect(await rejection(t.session.request('Echo', { n: 1 }, Date.now() + 80))).toStrictEqual(DEADLINE_PASSED);
    await until('the login at the server', () => server.sent('login').length === 1);
    server.reply(server.sent('login')[0], { id: 1, result: LOGIN_RESULT });
    await until('the session up', () => t.session.up);
    expect(server.received).toStrictEqual([loginFrame(1)]);
    expect([t.session.logins, t.session.state.lastError]).toStrictEqual([1, null]);
  });
});

describe('the request bound', () => {
  /** Arguments whose request frame, with the longest id, is `bytes` long. */
  const argsOf = (cmd: string, bytes: number) => {
    const frame = (fill: string) => `{"id":${Number.MAX_SAFE_INTEGER},"cmd":"${cmd}","args":{"fill":"${fill}"}}`;
    return { fill: 'x'.repeat(bytes - frame('').length) };
  };

  it('is what every trading server must accept: 16 MiB', () => {
    expect(REQUEST_MAX_BYTES).toBe(SERVER_MIN_FRAME_BYTES);
    expect(REQUEST_MAX_BYTES).toBe(16 * 1024 * 1024);
  });

  it('sends a request at the bound to a server reading no more, and refuses one byte more as Validation: nothing sent, the session untouched', async () => {
    const server = await FakeTradingServer.start('PF4', SERVER_MIN_FRAME_BYTES);
    server.script.set('Keyed', answer('stored'));
    const t = harness(server.url);
    await up(t);
    expect(await t.session.request('Keyed', argsOf('Keyed', REQUEST_MAX_BYTES), inFiveSeconds())).toBe('stored');
    expect(server.sent('Keyed').map((a) => a.text.length <= SERVER_MIN_FRAME_BYTES)).toStrictEqual([true]);

    const over = REQUEST_MAX_BYTES + 1;
    expect(await rejection(t.session.request('Keyed', argsOf('Keyed', over), inFiveSeconds()))).toStrictEqual({
      kind: 'OperationError',
      code: 'Validation',
      managerCode: null,
      message: `the Keyed request to the trading server takes ${over} bytes, more than the 16777216 bytes (16 MiB) every trading server must accept in one frame: send less in one call`,
    });
    // A character of several bytes counts as its bytes.
    const wide = { fill: '€'.repeat(Math.ceil(REQUEST_MAX_BYTES / 3)) };
    expect((await rejection(t.session.request('Keyed', wide, inFiveSeconds()))).code).toBe('Validation');
    expect(server.sent('Keyed')).toHaveLength(1);
    expect(t.session.fairUse.stats.onWire).toBe(0);
    // The same connection goes on answering.
    expect(await t.session.request('Echo', { n: 1 }, inFiveSeconds())).toStrictEqual({ n: 1 });
    expect([t.session.up, t.session.state.lastError, server.peers.length, server.peers[0].closed]).toStrictEqual([
      true,
      null,
      1,
      false,
    ]);
  });

  it('refuses an oversized request while down without connecting for it', async () => {
    const server = await FakeTradingServer.start();
    const t = harness(server.url, NO_RETRY);
    expect(
      (await rejection(t.session.request('Keyed', argsOf('Keyed', REQUEST_MAX_BYTES + 1), inFiveSeconds()))).code,
    ).toBe('Validation');
    expect([server.peers.length, t.session.connectAttempts]).toStrictEqual([0, 0]);
  });
});

describe("the platform's password in what the trading server says", () => {
  it('is masked in text, as it is and as a JSON string writes it; an empty password masks nothing', () => {
    expect(withoutPassword('refused: manager-pw (manager-pw)', 'manager-pw')).toBe('refused: *** (***)');
    expect(withoutPassword('args {"password":"p\\"w\\\\1"}', 'p"w\\1')).toBe('args {"password":"***"}');
    expect(withoutPassword('raw p"w\\1', 'p"w\\1')).toBe('raw ***');
    expect(withoutPassword('nothing to hide', '')).toBe('nothing to hide');
  });

  it('never reaches lastError, the log or the caller from a login refusal that echoes it', async () => {
    const server = await FakeTradingServer.start();
    const password = 'pw"with\\quote';
    server.script.set('login', (a, s) =>
      s.reply(a, {
        id: a.frame.id,
        error: {
          code: PF4_RESULT.NoConnect,
          message: `password ${String(a.frame.args?.password)} refused for ${JSON.stringify(a.frame.args)}`,
        },
      }),
    );
    const t = harness(server.url, NO_RETRY, 'PF4', true, { password });
    const said = 'password *** refused for {"login":1000,"password":"***","pump":true,"versions":[1]}';
    expect(await rejection(t.session.request('Echo', undefined, inFiveSeconds()))).toStrictEqual({
      kind: 'OperationError',
      code: 'NoConnect',
      message: `manager login failed: ${said}`,
      managerCode: PF4_RESULT.NoConnect,
    });
    expect(t.session.state.lastError).toBe(`login failed: ${said}`);
    expect(t.logged).toStrictEqual([loggedLoginFailed(server.url, `login failed: ${said}`)]);
    // The password did go to the server, in the login.
    expect(server.sent('login')[0].frame.args?.password).toBe(password);
    await until('the refused connection closed', () => t.downs.length === 1);
    expect(JSON.stringify([t.session.state, t.downs, t.logged])).not.toContain('quote');
  });

  it('never reaches lastError from a refused login answer that shows it', async () => {
    const server = await FakeTradingServer.start();
    // A password the refusal would quote: the build the answer shows.
    const t = harness(server.url, NO_RETRY, 'PF4', true, { password: '1500', minBuild: 2000 });
    const said = "the trading server's build is ***; the platform requires at least build 2000 (minBuild)";
    expect((await rejection(t.session.request('Echo', undefined, inFiveSeconds()))).message).toBe(
      `manager login answer refused: ${said}`,
    );
    expect(t.session.state.lastError).toBe(said);
    expect(t.logged.map((l) => l.fields.error)).toStrictEqual([said]);
  });
});

describe('events before the login answer is accepted', () => {
  const event = (n: number) => ({ event: 'users', op: 'update', record: { login: n } });
  /** The login is answered after `count` events of the given size. */
  const eventsThenAnswer =
    (count: number, comment = ''): Script =>
    (a, s) => {
      for (let n = 1; n <= count; n++) s.reply(a, comment ? { ...event(n), record: { login: n, comment } } : event(n));
      s.reply(a, { id: a.frame.id, result: LOGIN_RESULT });
    };

  it('are held up to 10,000 and handed on in order once the answer is accepted', async () => {
    expect(HELD_EVENTS_BOUND).toStrictEqual({ frames: 10_000, bytes: 64 * 1024 * 1024 });
    const server = await FakeTradingServer.start();
    server.script.set('login', eventsThenAnswer(10_000));
    const t = harness(server.url, NO_RETRY);
    await up(t);
    await until('every held event', () => t.events.length === 10_000);
    expect(t.events.map((e) => (e.record as { login: number }).login)).toStrictEqual(
      Array.from({ length: 10_000 }, (_, i) => i + 1),
    );
  });

  it('end the connection past 10,000, the session down saying so, none reaching the cache and the answer behind them ignored', async () => {
    const server = await FakeTradingServer.start();
    server.script.set('login', eventsThenAnswer(10_001));
    const t = harness(server.url, NO_RETRY);
    const said = 'login failed: the trading server sent more than 10000 events before its login answer was accepted';
    expect(await rejection(t.session.request('Echo', undefined, inFiveSeconds()))).toStrictEqual({
      kind: 'OperationError',
      code: 'NoConnect',
      message: `manager ${said}`,
      managerCode: null,
    });
    await until('the connection closed', () => server.peers[0].closed && t.downs.length === 1);
    expect(t.session.state).toMatchObject({ up: false, lastError: said });
    expect([t.session.logins, t.session.declared, t.events]).toStrictEqual([0, undefined, []]);
    expect(t.logged).toStrictEqual([
      {
        level: 'error',
        fields: { msg: 'manager login failed', platform: 'pf4-main', server: server.url, error: said },
      },
    ]);
    expect(server.received).toStrictEqual([loginFrame(1)]);
  });

  it('end the connection past the byte bound too', async () => {
    const server = await FakeTradingServer.start();
    server.script.set('login', eventsThenAnswer(2, 'x'.repeat(600)));
    const t = harness(server.url, { ...NO_RETRY, heldEvents: { frames: 100, bytes: 1000 } });
    const said =
      'login failed: the trading server sent more than 1000 bytes of events before its login answer was accepted';
    expect((await rejection(t.session.request('Echo', undefined, inFiveSeconds()))).message).toBe(`manager ${said}`);
    await until('the connection closed', () => server.peers[0].closed && t.downs.length === 1);
    expect([t.session.up, t.session.state.lastError, t.events]).toStrictEqual([false, said, []]);
  });
});

describe('connecting on demand', () => {
  it('shares one connect and login among the requests that arrive while down', async () => {
    const server = await FakeTradingServer.start();
    const t = harness(server.url);
    const deadline = inFiveSeconds();
    const results = await Promise.all([1, 2, 3].map((n) => t.session.request('Echo', { n }, deadline)));
    expect(results).toStrictEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(server.received).toStrictEqual([
      loginFrame(1),
      { id: 2, cmd: 'Echo', args: { n: 1 } },
      { id: 3, cmd: 'Echo', args: { n: 2 } },
      { id: 4, cmd: 'Echo', args: { n: 3 } },
    ]);
    expect([server.peers.length, t.session.logins]).toStrictEqual([1, 1]);
  });

  it('gives a request within 100 ms of a failed connect the same failure, and tries again after', async () => {
    const server = await FakeTradingServer.start();
    server.script.set('login', inTurn(refuseLogin, answer(LOGIN_RESULT)));
    const t = harness(server.url, NO_RETRY);
    const at = Date.now();
    const clock = vi.spyOn(Date, 'now').mockReturnValue(at);
    const first = await t.session.request('Echo', { n: 1 }, at + 5000).catch((e: unknown) => e);
    expect(shape(first)).toStrictEqual(REFUSED);
    clock.mockReturnValue(at + 99);
    const second = await t.session.request('Echo', { n: 2 }, at + 5000).catch((e: unknown) => e);
    expect(second).toBe(first);
    clock.mockReturnValue(at + 100);
    expect(await t.session.request('Echo', { n: 3 }, at + 5000)).toStrictEqual({ n: 3 });
    expect(server.received).toStrictEqual([loginFrame(1), loginFrame(2), { id: 3, cmd: 'Echo', args: { n: 3 } }]);
    expect(server.peers.length).toBe(2);
  });

  it('lets a request within the gap join a reconnect already under way', async () => {
    const server = await FakeTradingServer.start();
    server.script.set('login', inTurn(refuseLogin, silent));
    const t = harness(server.url, QUICK_RETRY);
    const at = Date.now();
    const clock = vi.spyOn(Date, 'now').mockReturnValue(at);
    expect(await rejection(t.session.request('Echo', { n: 1 }, at + 5000))).toStrictEqual(REFUSED);
    await until('the retry at the server', () => server.sent('login').length === 2);
    clock.mockReturnValue(at + 1);
    const joined = track(t.session.request('Echo', { n: 2 }, at + 5000));
    const retry = server.sent('login')[1];
    server.reply(retry, { id: retry.frame.id, result: LOGIN_RESULT });
    expect(await joined.promise).toStrictEqual({ n: 2 });
    expect(server.received).toStrictEqual([loginFrame(1), loginFrame(2), { id: 3, cmd: 'Echo', args: { n: 2 } }]);
    expect([server.peers.length, t.session.logins]).toStrictEqual([2, 1]);
  });

  it('forgets a failed connect once a login succeeds', async () => {
    const server = await FakeTradingServer.start();
    server.script.set('login', inTurn(refuseLogin, answer(LOGIN_RESULT)));
    const t = harness(server.url, NO_RETRY);
    const at = Date.now();
    const clock = vi.spyOn(Date, 'now').mockReturnValue(at);
    expect(await rejection(t.session.request('Echo', { n: 1 }, at + 5000))).toStrictEqual(REFUSED);
    clock.mockReturnValue(at + 100);
    expect(await t.session.request('Echo', { n: 2 }, at + 5000)).toStrictEqual({ n: 2 });
    server.drop();
    await until('the session down', () => !t.session.up);
    clock.mockReturnValue(at + 150);
    expect(await t.session.request('Echo', { n: 3 }, at + 5000)).toStrictEqual({ n: 3 });
    expect([server.peers.length, t.session.logins]).toStrictEqual([3, 2]);
  });

  it('keeps a new connection when the refused one it replaced finishes closing', async () => {
    const server = await FakeTradingServer.start();
    server.script.set('login', inTurn(refuseLogin, answer(LOGIN_RESULT)));
    const t = harness(server.url, NO_RETRY);
    const at = Date.now();
    const clock = vi.spyOn(Date, 'now').mockReturnValue(at);
    expect(await rejection(t.session.request('Echo', { n: 1 }, at + 5000))).toStrictEqual(REFUSED);
    // The refused socket is still closing: this request opens a new one at once.
    clock.mockReturnValue(at + 100);
    expect(await t.session.request('Echo', { n: 2 }, at + 5000)).toStrictEqual({ n: 2 });
    await until('the refused connection closed', () => server.peers[0].closed);
    expect(await t.session.request('Echo', { n: 3 }, at + 5000)).toStrictEqual({ n: 3 });
    expect([t.session.up, t.session.state.lastError, t.session.logins, server.peers.length]).toStrictEqual([
      true,
      null,
      1,
      2,
    ]);
    expect(t.downs).toStrictEqual([]);
    expect(t.logged).toStrictEqual([
      loggedLoginFailed(server.url, 'login failed: logins refused'),
      loggedUp(server.url),
    ]);
  });
});

describe('events', () => {
  it('hands events to onEvent in arrival order, text or binary; unreadable frames are logged and dropped', async () => {
    const server = await FakeTradingServer.start();
    const t = harness(server.url);
    await up(t);
    const comment = 'x'.repeat(200_000);
    server.push({ event: 'resync', op: 'begin', record: { server: 'trading-1', family: 'PF4' } });
    server.push(Buffer.from('{"event":"deals","op":"add","record":{"deal":18446744073709551615}}'));
    server.push('this is not json');
    server.push({ hello: 'neither an answer nor an event' });
    server.push({ id: 999, result: 'an answer for nobody' });
    server.push({ event: 'users', op: 'update', record: { login: 7, comment } });
    // Frames arrive in order: once the echo is back, every frame pushed before it has been read.
    expect(await t.session.request('Echo', { n: 1 }, inFiveSeconds())).toStrictEqual({ n: 1 });
    expect(t.events).toStrictEqual([
      { event: 'resync', op: 'begin', record: { server: 'trading-1', family: 'PF4' } },
      { event: 'deals', op: 'add', record: { deal: 18446744073709551615n } },
      { event: 'users', op: 'update', record: { login: 7, comment } },
    ]);
    expect(t.logged).toStrictEqual([
      loggedUp(server.url),
      { level: 'warn', fields: { msg: 'unreadable frame from the trading server', platform: 'pf4-main' } },
    ]);
    expect([t.session.up, server.peers.length]).toStrictEqual([true, 1]);
  });
});

describe('connection loss', () => {
  it('fails requests in flight, goes down, calls onDown and reconnects by itself', async () => {
    const server = await FakeTradingServer.start();
    server.script.set('Slow', silent);
    const t = harness(server.url, QUICK_RETRY);
    await up(t);
    const inFlight = [
      rejection(t.session.request('Slow', { n: 1 }, inFiveSeconds())),
      rejection(t.session.request('Slow', undefined, { sendBy: inFiveSeconds(), answerBy: Date.now() + 10_000 })),
    ];
    await until('both requests at the server', () => server.sent('Slow').length === 2);
    server.peers[0].ws.close(1001, 'going away');
    expect(await Promise.all(inFlight)).toStrictEqual([LOST, LOST]);
    expect(upAndError(t.downs)).toStrictEqual([{ up: false, lastError: 'connection closed' }]);
    await until('logged in again', () => t.session.logins === 2 && t.session.up);
    expect(t.session.state.lastError).toBe(null);
    expect(await t.session.request('Echo', { n: 3 }, inFiveSeconds())).toStrictEqual({ n: 3 });
    expect(server.received.map((f) => [f.id, f.cmd])).toStrictEqual([
      [1, 'login'],
      [2, 'Slow'],
      [3, 'Slow'],
      [4, 'login'],
      [5, 'Echo'],
    ]);
    expect(server.peers.length).toBe(2);
    expect(t.logged).toStrictEqual([
      loggedUp(server.url),
      loggedDown(server.url, 'connection closed'),
      loggedUp(server.url),
    ]);
  });

  it('backs off exponentially while logins are refused and starts over after a login', async () => {
    const server = await FakeTradingServer.start();
    server.script.set('login', inTurn(refuseLogin, refuseLogin, refuseLogin, refuseLogin, answer(LOGIN_RESULT)));
    const delays = recordRetryDelays();
    const t = harness(server.url, { backoff: { baseMs: 8, capMs: 32 }, random: () => 0.5 });
    await up(t);
    expect(delays).toStrictEqual([4, 8, 16, 16]);
    server.drop();
    await until('logged in again', () => t.session.logins === 2 && t.session.up);
    expect(delays).toStrictEqual([4, 8, 16, 16, 4]);
    expect(server.sent('login').length).toBe(6);
    expect(t.downs.map((d) => d.lastError)).toStrictEqual([
      'login failed: logins refused',
      'login failed: logins refused',
      'login failed: logins refused',
      'login failed: logins refused',
      'connection closed',
    ]);
  });

  it('cancels a pending retry when a request logs in, and schedules a new one on the next loss', async () => {
    const server = await FakeTradingServer.start();
    let draw = 0.99;
    const t = harness(server.url, { backoff: { baseMs: 60_000, capMs: 60_000 }, random: () => draw });
    await up(t);
    server.drop();
    await until('the session down', () => !t.session.up);
    // The retry is a minute away; the request logs in now.
    expect(await t.session.request('Echo', { n: 1 }, inFiveSeconds())).toStrictEqual({ n: 1 });
    expect(t.session.logins).toBe(2);
    draw = 0;
    server.drop();
    await until('logged in again by itself', () => t.session.logins === 3 && t.session.up);
    expect(server.peers.length).toBe(3);
  });

  it('reconnect(reason) drops the connection and logs in afresh, the reason standing while down', async () => {
    const server = await FakeTradingServer.start();
    const t = harness(server.url, QUICK_RETRY);
    t.session.reconnect('nothing to drop yet');
    expect(t.session.state.lastError).toBe(null);
    expect(await t.session.request('Echo', { n: 0 }, inFiveSeconds())).toStrictEqual({ n: 0 });
    t.session.reconnect('server restart');
    expect(t.session.state).toMatchObject({ up: true, lastError: 'server restart' });
    // The socket is closing: nothing is sent on it.
    expect(await rejection(t.session.request('Echo', { n: 1 }, inFiveSeconds()))).toStrictEqual({
      kind: 'OperationError',
      code: 'NoConnect',
      message: 'the manager connection was lost',
      managerCode: null,
    });
    await until('logged in again', () => t.session.logins === 2 && t.session.up);
    expect(upAndError(t.downs)).toStrictEqual([{ up: false, lastError: 'server restart' }]);
    expect(t.session.state.lastError).toBe(null);
    expect(await t.session.request('Echo', { n: 2 }, inFiveSeconds())).toStrictEqual({ n: 2 });
    expect(server.received).toStrictEqual([
      loginFrame(1),
      { id: 2, cmd: 'Echo', args: { n: 0 } },
      loginFrame(3),
      { id: 4, cmd: 'Echo', args: { n: 2 } },
    ]);
    expect(t.logged).toStrictEqual([
      loggedUp(server.url),
      loggedDown(server.url, 'server restart'),
      loggedUp(server.url),
    ]);
  });

  it('needs no onDown hook', async () => {
    const server = await FakeTradingServer.start();
    const t = harness(server.url, QUICK_RETRY, 'PF4', false);
    await up(t);
    server.drop();
    await until('logged in again', () => t.session.logins === 2 && t.session.up);
    expect(server.peers.length).toBe(2);
  });
});

describe('keep-alive', () => {
  it('sends a Ping every pingIntervalMs and keeps an answering connection', async () => {
    const server = await FakeTradingServer.start();
    const t = harness(server.url, { pingIntervalMs: 20 });
    await up(t);
    await until('three pings', () => server.sent('Ping').length >= 3);
    expect(server.arrivals.slice(1, 4).map((a) => a.text)).toStrictEqual([
      '{"id":2,"cmd":"Ping"}',
      '{"id":3,"cmd":"Ping"}',
      '{"id":4,"cmd":"Ping"}',
    ]);
    expect([t.session.up, t.session.logins, server.peers.length, t.session.state.lastError]).toStrictEqual([
      true,
      1,
      1,
      null,
    ]);
  });

  it('terminates a connection whose ping goes unanswered with no other frames (timeout defaulting to the interval)', async () => {
    const server = await FakeTradingServer.start();
    server.script.set('Ping', silent);
    const t = harness(server.url, { ...NO_RETRY, pingIntervalMs: 40 });
    await up(t);
    await until('the session down', () => t.downs.length === 1);
    expect(upAndError(t.downs)).toStrictEqual([{ up: false, lastError: 'keep-alive ping not answered' }]);
    expect(t.logged).toStrictEqual([
      loggedUp(server.url),
      { level: 'warn', fields: { msg: 'keep-alive ping not answered, reconnecting', platform: 'pf4-main' } },
      loggedDown(server.url, 'keep-alive ping not answered'),
    ]);
    expect(server.sent('Ping').map((a) => a.text)).toStrictEqual(['{"id":2,"cmd":"Ping"}']);
    await until('the server to see the connection closed', () => server.peers[0].closed);
  });

  it('keeps a connection whose ping goes unanswered while other frames keep arriving', async () => {
    const server = await FakeTradingServer.start();
    server.script.set('Ping', silent);
    const t = harness(server.url, { ...NO_RETRY, pingIntervalMs: 20, pingTimeoutMs: 1500 });
    await up(t);
    const feed = realSetInterval(() => server.push({ event: 'ticks', op: 'update', record: { symbol: 'EURUSD' } }), 5);
    try {
      // The first ping timed out (a second one is sent only then), and the connection stayed.
      await until('a second ping', () => server.sent('Ping').length === 2);
    } finally {
      realClearInterval(feed);
    }
    expect(server.sent('Ping').map((a) => a.peer)).toStrictEqual([server.peers[0], server.peers[0]]);
    expect([t.session.up, server.peers.length, t.downs.length, t.session.state.lastError]).toStrictEqual([
      true,
      1,
      0,
      null,
    ]);
    expect(t.logged).toStrictEqual([loggedUp(server.url)]);
  });

  it('asks again at once when a ping times out after other frames, and gives up one timeout after that', async () => {
    const server = await FakeTradingServer.start();
    server.script.set('Ping', silent);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    const t = harness(server.url, { ...NO_RETRY, pingIntervalMs: 1000, pingTimeoutMs: 2500 });
    expect(await t.session.request('Echo', { n: 1 }, Date.now() + 60_000)).toStrictEqual({ n: 1 });
    await vi.advanceTimersByTimeAsync(1000);
    await until('the first ping', () => server.sent('Ping').length === 1);
    // A frame after the ping was sent, then silence: the server froze while its ping was out.
    await vi.advanceTimersByTimeAsync(500);
    server.push({ event: 'ticks', op: 'update', record: { symbol: 'EURUSD' } });
    await until('the frame at the session', () => t.events.length === 1);
    await vi.advanceTimersByTimeAsync(1999);
    expect(server.sent('Ping').length).toBe(1);
    // The first ping's time is up 2.5 s after it was sent: alive then (a frame came), so a second ping goes out at
    // once rather than at the next interval, 0.5 s later.
    await vi.advanceTimersByTimeAsync(1);
    await until('the second ping', () => server.sent('Ping').length === 2);
    await vi.advanceTimersByTimeAsync(2499);
    expect([t.session.up, t.session.state.lastError]).toStrictEqual([true, null]);
    await vi.advanceTimersByTimeAsync(1);
    expect(t.session.state.lastError).toBe('keep-alive ping not answered');
    await until('the session down', () => !t.session.up);
    expect(server.sent('Ping').map((a) => a.peer)).toStrictEqual([server.peers[0], server.peers[0]]);
  });

  it('has one ping in flight at a time', async () => {
    const server = await FakeTradingServer.start();
    server.script.set('Ping', silent);
    const ticks = countIntervalTicks(15);
    const t = harness(server.url, { ...NO_RETRY, pingIntervalMs: 15, pingTimeoutMs: 10_000 });
    await up(t);
    await until('four ping intervals', () => ticks.count >= 4);
    // Whatever the ticks sent is at the server before this echo's request.
    expect(await t.session.request('Echo', { n: 1 }, inFiveSeconds())).toStrictEqual({ n: 1 });
    expect(server.sent('Ping').length).toBe(1);
    expect(t.session.up).toBe(true);
  });
});

describe('close()', () => {
  it('fails pending requests, reconnects no more and refuses later requests', async () => {
    const server = await FakeTradingServer.start();
    server.script.set('Slow', silent);
    const delays = recordRetryDelays();
    const t = harness(server.url, QUICK_RETRY);
    await up(t);
    const pending = rejection(t.session.request('Slow', {}, inFiveSeconds()));
    await until('the request at the server', () => server.sent('Slow').length === 1);
    const closing = t.session.close();
    t.session.reconnect('too late');
    await closing;
    expect(await pending).toStrictEqual({ ...LOST, message: 'the manager session is closed' });
    expect(upAndError([t.session.state])).toStrictEqual([{ up: false, lastError: 'connection closed' }]);
    expect(upAndError(t.downs)).toStrictEqual([{ up: false, lastError: 'connection closed' }]);
    expect(delays).toStrictEqual([]);
    expect(await rejection(t.session.request('Echo', {}, inFiveSeconds()))).toStrictEqual(CLOSED);
    expect(await rejection(t.session.request('Echo', {}, Date.now() - 1))).toStrictEqual(CLOSED);
    // Neither start() nor close() opens anything any more.
    t.session.start();
    await t.session.close();
    expect(upAndError([t.session.state])).toStrictEqual([{ up: false, lastError: 'connection closed' }]);
    expect(t.downs.length).toBe(1);
    await until('the server to see the connection closed', () => server.peers[0].closed);
    expect([server.peers.length, t.session.logins]).toStrictEqual([1, 1]);
    expect(t.logged).toStrictEqual([loggedUp(server.url), loggedDown(server.url, 'connection closed')]);
  });

  it('closes a session that never connected', async () => {
    const t = harness(`ws://127.0.0.1:${await freePort()}/trading-1`);
    const before = { ...t.session.state };
    await expect(t.session.close()).resolves.toBeUndefined();
    expect(await rejection(t.session.request('Echo', {}, inFiveSeconds()))).toStrictEqual(CLOSED);
    expect(t.session.state).toStrictEqual(before);
    expect([t.downs, t.logged]).toStrictEqual([[], []]);
  });
});

describe('logout()', () => {
  it('closes the connection, reconnects no more until started again, then logs in afresh', async () => {
    const server = await FakeTradingServer.start();
    const delays = recordRetryDelays();
    const t = harness(server.url, QUICK_RETRY);
    await up(t);
    await t.session.logout();
    expect(t.session.up).toBe(false);
    expect(t.downs.length).toBe(1);
    await until('the server to see the connection closed', () => server.peers[0].closed);
    expect(delays).toStrictEqual([]);
    expect(t.logged).toStrictEqual([
      loggedUp(server.url),
      { level: 'info', fields: { msg: 'manager session logged out', platform: 'pf4-main', server: server.url } },
    ]);
    await up(t);
    expect([server.peers.length, t.session.logins]).toStrictEqual([2, 2]);
    expect(await t.session.request('Echo', { n: 1 }, inFiveSeconds())).toStrictEqual({ n: 1 });
    // Logged in again, it reconnects after a drop as before.
    server.peers[1].ws.terminate();
    await until('a reconnect', () => t.session.logins === 3);
  });
});

describe('defaults', () => {
  const fakeClock = () =>
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });

  it('gives the login 10 s', async () => {
    const server = await FakeTradingServer.start();
    server.script.set('login', silent);
    fakeClock();
    const t = harness(server.url, NO_RETRY);
    const call = track(t.session.request('Echo', {}, Date.now() + 60_000));
    await until('the login at the server', () => server.sent('login').length === 1);
    await vi.advanceTimersByTimeAsync(9_999);
    expect([call.settled, t.session.state.lastError]).toStrictEqual([false, null]);
    await vi.advanceTimersByTimeAsync(1);
    expect(await rejection(call.promise)).toStrictEqual({
      kind: 'OperationError',
      code: 'NoConnect',
      message: 'manager login not answered in time',
      managerCode: null,
    });
  });

  it('pings every 5 s and gives a ping 5 s', async () => {
    const server = await FakeTradingServer.start();
    server.script.set('Ping', silent);
    fakeClock();
    const t = harness(server.url, NO_RETRY);
    expect(await t.session.request('Echo', { n: 1 }, Date.now() + 60_000)).toStrictEqual({ n: 1 });
    // Answered requests leave no timer behind (the login's, the connect's, the echo's): only the ping interval.
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(4_999);
    expect(await t.session.request('Echo', { n: 2 }, Date.now() + 60_000)).toStrictEqual({ n: 2 });
    expect(server.sent('Ping')).toStrictEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    await until('the first ping', () => server.sent('Ping').length === 1);
    await vi.advanceTimersByTimeAsync(4_999);
    expect(t.session.state.lastError).toBe(null);
    await vi.advanceTimersByTimeAsync(1);
    expect(t.session.state.lastError).toBe('keep-alive ping not answered');
    await until('the session down', () => !t.session.up);
    expect(server.sent('Ping').map((a) => a.text)).toStrictEqual(['{"id":4,"cmd":"Ping"}']);
  });
});

describe('fair use of the session between callers', () => {
  it('keeps a flood from one caller to its share: the other caller is served next, the flood is refused "too frequent"', async () => {
    const server = await FakeTradingServer.start();
    server.script.set('Slow', silent);
    const t = harness(server.url, {
      fairUse: { calls: 4, bytes: 1 << 20, queuedPerCaller: 64, activeMs: 1000, retryAfterSeconds: 1 },
    });
    await up(t);
    const deadline = (caller: string) => ({ sendBy: Date.now() + 5000, answerBy: Date.now() + 5000, caller });
    const flood = Array.from({ length: 4 }, () => track(t.session.request('Slow', undefined, deadline('flood'))));
    await until('the flood on the wire', () => server.sent('Slow').length === 4);
    const quiet = track(t.session.request('Echo', { n: 1 }, deadline('quiet')));
    // The flood holds every place and now has to wait: past its share of two, it is refused before anything is sent.
    const refused = await rejection(t.session.request('Slow', undefined, deadline('flood')));
    expect(refused).toStrictEqual({
      kind: 'OperationError',
      code: 'PF4Error',
      managerCode: PF4_RESULT.TooFrequent,
      message:
        "the trade platform's manager session is shared by 2 callers and this one already has 4 of its 4 commands on the wire; retry after 1 s",
    });
    let error: unknown;
    await t.session.request('Slow', undefined, deadline('flood')).catch((e: unknown) => {
      error = e;
    });
    expect((error as OperationError).retryAfterSeconds).toBe(1);
    expect(server.sent('Slow')).toHaveLength(4);
    expect(server.sent('Echo')).toHaveLength(0);
    // One of the flood's answers frees a place: the quiet caller's command goes at once.
    server.reply(server.sent('Slow')[0], { id: server.sent('Slow')[0].frame.id, result: 'x' });
    await until('the quiet caller served', () => quiet.settled);
    await expect(quiet.promise).resolves.toStrictEqual({ n: 1 });
    await flood[0].promise;
    expect(t.session.fairUse.stats).toMatchObject({ onWire: 3, waiting: 0, refused: 2 });
  });

  it("keeps a command's place past its caller's deadline until the late answer comes, or the connection goes", async () => {
    const server = await FakeTradingServer.start();
    server.script.set('Slow', silent);
    const t = harness(server.url, {
      fairUse: { calls: 2, bytes: 1 << 20, queuedPerCaller: 8, activeMs: 1000, retryAfterSeconds: 1 },
    });
    await up(t);
    const soon = () => ({ sendBy: Date.now() + 100, answerBy: Date.now() + 100, caller: 'impatient' });
    const failed = await Promise.all([1, 2].map(() => rejection(t.session.request('Slow', undefined, soon()))));
    expect(failed.map((f) => f.kind)).toStrictEqual(['DeadlineError', 'DeadlineError']);
    // Both commands are still the server's: their places stay taken.
    expect(t.session.fairUse.stats.onWire).toBe(2);
    const [first] = server.sent('Slow');
    server.reply(first, { id: first.frame.id, result: 'late' });
    await until('the late answer giving its place back', () => t.session.fairUse.stats.onWire === 1);
    server.drop();
    await until('the connection gone', () => t.session.fairUse.stats.onWire === 0);
  });

  it("sends the session's own keep-alive and login whatever callers hold", async () => {
    const server = await FakeTradingServer.start();
    server.script.set('Slow', silent);
    const t = harness(server.url, {
      pingIntervalMs: 20,
      pingTimeoutMs: 500,
      fairUse: { calls: 1, bytes: 1 << 20, queuedPerCaller: 8, activeMs: 1000, retryAfterSeconds: 1 },
    });
    await up(t);
    void t.session.request('Slow', undefined, Date.now() + 5000).catch(() => {});
    const pings = server.sent('Ping').length;
    await until('pings while the only place is held', () => server.sent('Ping').length >= pings + 3);
    expect(t.session.up).toBe(true);
  });

  it('leaves an answer frame past the bound unread: its request fails as too large, the session stays up', async () => {
    const server = await FakeTradingServer.start();
    server.script.set('Huge', (a, s) => s.reply(a, `{"id":${a.frame.id},"result":"${'x'.repeat(5000)}"}`));
    const t = harness(server.url, { maxAnswerFrameBytes: 4096 });
    await up(t);
    let error: unknown;
    await t.session.request('Huge', undefined, Date.now() + 5000).catch((e: unknown) => {
      error = e;
    });
    expect(error).toBeInstanceOf(AnswerTooLargeError);
    expect((error as AnswerTooLargeError).bytes).toBe(5000 + `{"id":2,"result":""}`.length);
    expect(t.logged.map((l) => l.fields.msg)).toContain('answer from the trading server too large, not read');
    // An event of any size is read, and the session goes on answering.
    server.push({ event: 'users', op: 'update', record: { login: 5, name: 'y'.repeat(5000) } });
    await until('the large event', () => t.events.length === 1);
    await expect(t.session.request('Echo', { ok: 1 }, Date.now() + 5000)).resolves.toStrictEqual({ ok: 1 });
    expect(t.session.up).toBe(true);
    expect(t.session.fairUse.stats.onWire).toBe(0);
  });
});

describe('the login answer', () => {
  /** The server answers the login with `result` and pushes a resync begin right behind it, in the same turn. */
  const answerThenResync =
    (result: unknown): Script =>
    (a, s) => {
      s.reply(a, { id: a.frame.id, result });
      s.reply(a, { event: 'resync', op: 'begin', record: { server: 'trading-1', family: 'PF4' } });
    };
  const cases: Array<{
    what: string;
    result: unknown;
    entry?: Partial<PlatformConfig>;
    reasons: string[];
    lastError: string;
  }> = [
    {
      what: 'another family',
      result: { ...LOGIN_RESULT, family: 'PF5' },
      reasons: ['family'],
      lastError: "the trading server's family is PF5; the platform is registered as PF4",
    },
    {
      what: 'a protocol version the broker did not offer',
      result: { ...LOGIN_RESULT, version: 2 },
      reasons: ['version'],
      lastError: 'the trading server speaks protocol version 2; this broker speaks 1',
    },
    {
      what: 'a build under minBuild',
      result: LOGIN_RESULT,
      entry: { minBuild: 1600 },
      reasons: ['build'],
      lastError: "the trading server's build is 1500; the platform requires at least build 1600 (minBuild)",
    },
    {
      what: 'rights short of requiredRights',
      result: LOGIN_RESULT,
      entry: { requiredRights: ['admin', 'money', 'reports'] },
      reasons: ['rights'],
      lastError: 'manager 1000 lacks the rights money, reports that the platform requires (requiredRights)',
    },
    {
      what: 'no keep-alive',
      result: { ...LOGIN_RESULT, capabilities: { commands: ['Echo'], events: [] } },
      reasons: ['keepAlive'],
      lastError: 'the trading server does not declare Ping (the keep-alive) among its commands',
    },
    {
      what: 'a malformed capability list',
      result: { ...LOGIN_RESULT, capabilities: { commands: 'Ping', events: ['users', 'bids'] } },
      reasons: ['malformed'],
      lastError:
        'login answer: capabilities.commands: Invalid input: expected array, received string; capabilities.events.1: Invalid option: expected one of "users"|"trades"|"ticks"|"symbols"|"groups"|"online"|"margin"|"positions"|"orders"|"deals"|"news"|"mail"|"newsBodies"|"symbolGroups"|"symbolSessions"|"symbolInfo"',
    },
    {
      what: 'the answer of a server before versions (no version, no capabilities)',
      result: { server: 'trading-1', family: 'PF4', build: 1, rights: ['admin'] },
      reasons: ['malformed'],
      lastError:
        'login answer: version: Invalid input: expected number, received undefined; capabilities: Invalid input: expected object, received undefined',
    },
    {
      what: 'several differences at once',
      result: { ...LOGIN_RESULT, family: 'PF5', build: 7 },
      entry: { minBuild: 100 },
      reasons: ['family', 'build'],
      lastError:
        "the trading server's family is PF5; the platform is registered as PF4; the trading server's build is 7; the platform requires at least build 100 (minBuild)",
    },
  ];

  for (const c of cases) {
    it(`keeps the session down on ${c.what}, naming it, with nothing else sent and nothing reaching the cache`, async () => {
      const server = await FakeTradingServer.start();
      server.script.set('login', answerThenResync(c.result));
      const t = harness(server.url, NO_RETRY, 'PF4', true, c.entry);
      const { since } = t.session.state;
      const refused = {
        kind: 'OperationError',
        code: 'NoConnect',
        message: `manager login answer refused: ${c.lastError}`,
        managerCode: null,
      };
      expect(await rejection(t.session.request('Echo', { a: 1 }, inFiveSeconds()))).toStrictEqual(refused);
      expect(t.session.state).toStrictEqual({ up: false, since, lastError: c.lastError });
      expect([t.session.up, t.session.logins, t.session.declared]).toStrictEqual([false, 0, undefined]);
      expect(Object.fromEntries(t.session.loginRefusals)).toStrictEqual(
        Object.fromEntries(c.reasons.map((r) => [r, 1])),
      );
      await until('the refused connection closed', () => server.peers[0].closed && t.downs.length === 1);
      expect(t.logged).toStrictEqual([
        {
          level: 'error',
          fields: {
            msg: 'manager login answer refused',
            platform: 'pf4-main',
            server: server.url,
            reasons: c.reasons,
            error: c.lastError,
          },
        },
      ]);
      // The request was not sent, the resync begin behind the answer never reached onEvent, and nothing was kept.
      expect(server.received).toStrictEqual([loginFrame(1)]);
      expect(t.events).toStrictEqual([]);
      expect(t.session.fairUse.stats.onWire).toBe(0);
      // A call while down logs in afresh and is refused the same way.
      await new Promise((resolve) => realSetTimeout(resolve, 110));
      expect(await rejection(t.session.request('Echo', { a: 2 }, inFiveSeconds()))).toStrictEqual(refused);
      expect(server.received).toStrictEqual([loginFrame(1), loginFrame(2)]);
      expect(t.session.loginRefusals.get(c.reasons[0] as never)).toBe(2);
    });
  }

  it('reconnects with backoff after a refused answer and comes up once the server answers as registered', async () => {
    const server = await FakeTradingServer.start();
    server.script.set(
      'login',
      inTurn(
        answer({ ...LOGIN_RESULT, family: 'PF5' }),
        answer({ ...LOGIN_RESULT, family: 'PF5' }),
        answer(LOGIN_RESULT),
      ),
    );
    const delays = recordRetryDelays();
    const t = harness(server.url, { backoff: { baseMs: 10, capMs: 1000 }, random: () => 0.99 });
    await up(t);
    expect(server.sent('login').length).toBe(3);
    expect(delays.slice(0, 2)).toStrictEqual([9, 19]);
    expect(t.session.state.lastError).toBeNull();
    expect(t.session.loginRefusals.get('family')).toBe(2);
    expect(t.session.declared?.answer).toStrictEqual(LOGIN_RESULT);
  });

  it('keeps what an accepted login declared, and hands on the events that came right behind its answer, in order', async () => {
    const server = await FakeTradingServer.start();
    server.script.set('login', (a, s) => {
      s.reply(a, { id: a.frame.id, result: LOGIN_RESULT });
      s.reply(a, { event: 'resync', op: 'begin', record: { server: 'trading-1', family: 'PF4' } });
      s.reply(a, { event: 'resync', op: 'end', record: { counts: {} } });
    });
    const t = harness(server.url, NO_RETRY);
    await up(t);
    await until('both events', () => t.events.length === 2);
    expect(t.events.map((e) => e.op)).toStrictEqual(['begin', 'end']);
    expect(t.session.declared?.answer).toStrictEqual(LOGIN_RESULT);
    expect([...t.session.declared!.commands]).toStrictEqual(COMMANDS);
    expect([...t.session.declared!.events]).toStrictEqual(['users', 'trades']);
    // A drop keeps them until the next login.
    server.drop();
    await until('the session down', () => !t.session.up);
    expect(t.session.declared?.answer).toStrictEqual(LOGIN_RESULT);
  });
});

describe('commands the login did not declare', () => {
  it('are refused at once, naming the command, with nothing sent, no place taken and no time-out', async () => {
    const server = await FakeTradingServer.start();
    server.script.set('TradeTransaction', answer(true));
    const t = harness(server.url, NO_RETRY);
    await up(t);
    let error: unknown;
    // A deadline already past: the refusal comes before any wait.
    await t.session.request('TradeTransaction', { order: 5 }, Date.now() - 1).catch((e: unknown) => {
      error = e;
    });
    expect(shape(error)).toStrictEqual({
      kind: 'OperationError',
      code: 'PF4Error',
      managerCode: null,
      message: 'the trading server does not implement TradeTransaction (not among the commands its login declared)',
    });
    expect((error as OperationError).notImplemented).toBe(true);
    expect(server.received).toStrictEqual([loginFrame(1)]);
    expect(t.session.fairUse.stats).toMatchObject({ onWire: 0, waiting: 0, refused: 0 });
    // A declared command goes on as before, on the same connection.
    expect(await t.session.request('Echo', { ok: 1 }, inFiveSeconds())).toStrictEqual({ ok: 1 });
    expect(t.session.logins).toBe(1);
  });

  it('are refused without waiting for a place while every place is taken', async () => {
    const server = await FakeTradingServer.start();
    server.script.set('Slow', silent);
    const t = harness(server.url, {
      ...NO_RETRY,
      fairUse: { calls: 2, bytes: 1 << 20, queuedPerCaller: 64, activeMs: 1000, retryAfterSeconds: 1 },
    });
    await up(t);
    const deadline = (caller: string) => ({ sendBy: Date.now() + 5000, answerBy: Date.now() + 5000, caller });
    const busy = [
      track(t.session.request('Slow', undefined, deadline('busy'))),
      track(t.session.request('Slow', undefined, deadline('busy'))),
    ];
    await until('both places taken', () => server.sent('Slow').length === 2);
    const refused = track(t.session.request('TradeTransaction', { order: 5 }, deadline('other')));
    await until('the refusal', () => refused.settled, 1000);
    expect(await rejection(refused.promise)).toMatchObject({
      code: 'PF4Error',
      message: expect.stringContaining('does not implement TradeTransaction'),
    });
    expect(t.session.fairUse.stats).toMatchObject({ onWire: 2, waiting: 0, refused: 0 });
    expect(busy.map((b) => b.settled)).toStrictEqual([false, false]);
  });

  it("names every missing command and event kind, on the platform's family", async () => {
    const server = await FakeTradingServer.start('PF5');
    const t = harness(server.url, NO_RETRY, 'PF5');
    await up(t);
    const refusal = t.session.undeclared(['Echo', 'OrderAdd', 'PositionGet', 'OrderAdd'], ['users', 'news', 'orders']);
    expect(shape(refusal)).toStrictEqual({
      kind: 'OperationError',
      code: 'PF5Error',
      managerCode: null,
      message:
        'the trading server does not implement OrderAdd, PositionGet (not among the commands its login declared), nor the news, orders events (not among the event kinds its login declared)',
    });
    expect(t.session.undeclared(['Echo', 'Ping'], ['users'])).toBeUndefined();
  });

  it('are refused after a fresh login that declares less than the one before, giving the place back', async () => {
    const server = await FakeTradingServer.start();
    server.script.set(
      'login',
      inTurn(answer(LOGIN_RESULT), answer({ ...LOGIN_RESULT, capabilities: { commands: ['Ping'], events: [] } })),
    );
    const t = harness(server.url, NO_RETRY);
    await up(t);
    server.drop();
    await until('the session down', () => !t.session.up);
    // Declared by the first login, so it is let through to log in again; the new login no longer declares it.
    expect(await rejection(t.session.request('Echo', { a: 1 }, inFiveSeconds()))).toStrictEqual({
      kind: 'OperationError',
      code: 'PF4Error',
      managerCode: null,
      message: 'the trading server does not implement Echo (not among the commands its login declared)',
    });
    expect(server.received).toStrictEqual([loginFrame(1), loginFrame(2)]);
    expect(t.session.fairUse.stats.onWire).toBe(0);
    expect(t.session.up).toBe(true);
  });
});

describe('answerFrameBound', () => {
  it('is twice the answer bound, and never under 64 MiB', () => {
    expect(answerFrameBound(16 * 1024 * 1024)).toBe(64 * 1024 * 1024);
    expect(answerFrameBound(40 * 1024 * 1024)).toBe(80 * 1024 * 1024);
    expect(answerFrameBound(1024)).toBe(ANSWER_FRAME_MIN_BYTES);
    expect(ANSWER_FRAME_MIN_BYTES).toBe(64 * 1024 * 1024);
  });
});
