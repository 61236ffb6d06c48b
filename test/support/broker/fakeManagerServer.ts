/**
 * A small trading server for the broker's tests, speaking just enough of the manager protocol: login (with a resync
 * of its users and trades), Ping, ServerTime and a few PF4/PF5 commands, plus switches a test flips to make it slow,
 * refuse logins, hold the resync back or drop every connection. It stands in for the simulator so broker tests do
 * not depend on the simulator's world and timings.
 *
 * Its login answers the protocol's `LoginResult` from `declared`, which a test may change to make it wrong: another
 * family or version, an old build, fewer rights, a capability list without a command or an event kind. By default it
 * declares every command the broker's handlers of its family may send (those it does not implement are answered with
 * the family's "bad data" code, as before) and every event kind the broker's cache of its family is filled by.
 * `loginResult`, when set, is answered instead of it as it is (a malformed answer).
 */
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { KINDS, eventKindOf } from '../../../broker/cache/pumpCache.js';
import { handlers } from '../../../broker/handlers/registry.js';
import {
  PROTOCOL_VERSIONS,
  type ChangeKind,
  type EventKind,
  type EventOp,
  type Family,
} from '../../../shared/protocol.js';
import { PF4_RESULT, PF5_RESULT } from '../../../shared/resultCodes.js';

type Row = Record<string, unknown>;

export const FAKE_PASSWORD = 'manager-secret';
export const FAKE_MANAGER = 1000;
export const FAKE_BUILD = 1500;
export const FAKE_RIGHTS: readonly string[] = ['admin', 'manager', 'trades'];

/** What the fake's login answer declares (`LoginResult`, its fields loosened so a test can make them wrong). */
export interface FakeDeclared {
  version: number;
  family: string;
  build: number;
  rights: string[];
  capabilities: { commands: string[]; events: string[] };
}

/** Every command the broker's handlers of `family` may send, sorted, Ping and ServerTime among them. */
export function brokerCommands(family: Family): string[] {
  const commands = new Set(['Ping', 'ServerTime']);
  for (const handler of handlers.values()) {
    if (handler.family === null || handler.family === family)
      for (const cmd of handler.needs.commands) commands.add(cmd);
  }
  return [...commands].sort();
}

/** Every event kind the broker's cache of `family` is filled by. */
export function brokerEvents(family: Family): ChangeKind[] {
  return [...new Set(Object.keys(KINDS[family]).map(eventKindOf))];
}

export class FakeManagerServer {
  readonly users = new Map<number, Row>();
  readonly trades = new Map<number, Row>();
  readonly ticks = new Map<string, Row>();
  /** Answer latency per command. */
  readonly delays = new Map<string, number>();
  /** Every command received, in order (login included). */
  readonly received: Array<{ cmd: string; args?: Record<string, unknown> }> = [];
  refuseLogin = false;
  /** What the login answer declares. */
  readonly declared: FakeDeclared;
  /** When set, answered to a login as it is instead of `declared`. */
  loginResult: unknown = undefined;
  /** Ms to wait between login and the resync `begin`. */
  resyncDelayMs = 0;
  logins = 0;
  connections = 0;
  private readonly wss: WebSocketServer;
  private readonly live = new Set<WebSocket>();
  private nextLogin = 0;

  private constructor(
    readonly family: Family,
    wss: WebSocketServer,
  ) {
    this.wss = wss;
    this.declared = {
      version: PROTOCOL_VERSIONS[PROTOCOL_VERSIONS.length - 1],
      family,
      build: FAKE_BUILD,
      rights: [...FAKE_RIGHTS],
      capabilities: { commands: brokerCommands(family), events: brokerEvents(family) },
    };
    wss.on('connection', (ws) => this.onConnection(ws));
  }

  static async start(family: Family, seed: { users?: number; trades?: number } = {}): Promise<FakeManagerServer> {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
    const server = new FakeManagerServer(family, wss);
    const firstLogin = family === 'PF4' ? 100001 : 500000;
    for (let i = 0; i < (seed.users ?? 20); i++) {
      const login = firstLogin + i;
      server.users.set(login, { login, group: 'demo', name: `User ${login}`, balance: 1000 + i });
    }
    server.nextLogin = firstLogin + (seed.users ?? 20);
    for (let i = 0; i < (seed.trades ?? 30); i++) {
      const order = 5000 + i * 2;
      server.trades.set(order, {
        order,
        login: firstLogin + (i % 5),
        symbol: 'EURUSD',
        volume: 10,
        tradeRecordState: 'OpenNormal',
      });
    }
    server.ticks.set('EURUSD', { symbol: 'EURUSD', time: '2026-01-01T00:00:00.000Z', bid: 1.1, ask: 1.1002 });
    return server;
  }

  get port(): number {
    return (this.wss.address() as AddressInfo).port;
  }

  get url(): string {
    return `ws://127.0.0.1:${this.port}/fake`;
  }

  /** Pushes a change event to every logged-in session. */
  emit(event: EventKind, op: EventOp, record: unknown): void {
    const text = JSON.stringify({ event, op, record });
    for (const ws of this.live) ws.send(text);
  }

  /** Terminates every manager connection without a close frame, like a network failure. */
  drop(): void {
    for (const ws of this.wss.clients) ws.terminate();
    this.live.clear();
  }

  count(cmd: string): number {
    return this.received.filter((r) => r.cmd === cmd).length;
  }

  close(): Promise<void> {
    this.drop();
    return new Promise((resolve) => this.wss.close(() => resolve()));
  }

  private onConnection(ws: WebSocket): void {
    this.connections++;
    let loggedIn = false;
    ws.on('close', () => this.live.delete(ws));
    ws.on('message', (data) => {
      const { id, cmd, args } = JSON.parse((data as Buffer).toString()) as {
        id: number;
        cmd: string;
        args?: Record<string, unknown>;
      };
      this.received.push({ cmd, args });
      const answer = (body: { result: unknown } | { error: { code: number; message: string } }) => {
        const send = () => {
          if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ id, ...body }));
        };
        const delay = this.delays.get(cmd) ?? 0;
        if (delay > 0) setTimeout(send, delay);
        else send();
      };
      if (cmd === 'login') {
        if (this.refuseLogin) {
          answer({
            error: {
              code: this.family === 'PF4' ? PF4_RESULT.NoConnect : PF5_RESULT.AuthServerBusy,
              message: 'logins refused',
            },
          });
          return;
        }
        if (args?.login !== FAKE_MANAGER || args?.password !== FAKE_PASSWORD) {
          answer({
            error: {
              code: this.family === 'PF4' ? PF4_RESULT.InvalidData : PF5_RESULT.AuthAccountInvalid,
              message: 'invalid account',
            },
          });
          return;
        }
        loggedIn = true;
        this.logins++;
        answer({
          result:
            this.loginResult !== undefined ? this.loginResult : { server: 'fake', ...structuredClone(this.declared) },
        });
        setTimeout(() => this.resync(ws), (this.delays.get('login') ?? 0) + this.resyncDelayMs);
        return;
      }
      if (!loggedIn) {
        answer({
          error: {
            code: this.family === 'PF4' ? PF4_RESULT.NotEnoughRights : PF5_RESULT.ErrPermissions,
            message: 'login first',
          },
        });
        return;
      }
      answer(this.command(cmd, args ?? {}, ws));
    });
  }

  private resync(ws: WebSocket): void {
    if (ws.readyState !== ws.OPEN) return;
    const send = (op: EventOp, record: unknown) => ws.send(JSON.stringify({ event: 'resync', op, record }));
    send('begin', { server: 'fake', family: this.family });
    // Users in two chunks so a test sees a snapshot built from several frames.
    const users = [...this.users.values()];
    const half = Math.ceil(users.length / 2);
    send('chunk', { kind: 'users', items: users.slice(0, half) });
    send('chunk', { kind: 'users', items: users.slice(half) });
    if (this.family === 'PF4') {
      send('chunk', { kind: 'trades', items: [...this.trades.values()] });
      send('chunk', { kind: 'ticks', items: [...this.ticks.values()] });
    }
    send('end', { counts: { users: this.users.size, trades: this.trades.size } });
    this.live.add(ws);
  }

  private command(
    cmd: string,
    args: Record<string, unknown>,
    ws: WebSocket,
  ): { result: unknown } | { error: { code: number; message: string } } {
    const badData = this.family === 'PF4' ? PF4_RESULT.InvalidData : PF5_RESULT.ErrParams;
    switch (cmd) {
      case 'Ping':
        return { result: { time: new Date().toISOString() } };
      case 'ServerTime':
        return { result: new Date().toISOString() };
      case 'UserRecordsRequest': {
        const logins = Array.isArray(args.logins) ? (args.logins as number[]) : [...this.users.keys()];
        return { result: logins.map((l) => this.users.get(l)).filter(Boolean) };
      }
      case 'UserRecordRequest': {
        const user = this.users.get(args.login as number);
        return user
          ? { result: user }
          : { error: { code: PF4_RESULT.InvalidData, message: `login ${String(args.login)} not found` } };
      }
      case 'UsersRequest': {
        const after = typeof args.after === 'number' ? args.after : -Infinity;
        const sorted = [...this.users.values()]
          .filter((u) => (u.login as number) > after)
          .sort((a, b) => (a.login as number) - (b.login as number));
        const limit = typeof args.limit === 'number' ? args.limit : sorted.length;
        return { result: { items: sorted.slice(0, limit), hasMore: sorted.length > limit } };
      }
      case 'UserRecordNew': {
        const record = (args.record ?? {}) as Row;
        const login = typeof record.login === 'number' && record.login > 0 ? record.login : this.nextLogin++;
        if (this.users.has(login)) return { error: { code: PF4_RESULT.InvalidData, message: `login ${login} exists` } };
        const user = { ...record, login };
        this.users.set(login, user);
        this.emit('users', 'add', user);
        return { result: user };
      }
      case 'UserRequest': {
        const user = this.users.get(args.login as number);
        return user
          ? { result: user }
          : { error: { code: PF5_RESULT.ErrNotfound, message: `login ${String(args.login)} not found` } };
      }
      case 'SrvRestart':
        setTimeout(() => {
          if (ws.readyState === ws.OPEN) ws.close(1012, 'restart');
        }, 20);
        return { result: true };
      default:
        return { error: { code: badData, message: `unknown command ${cmd}` } };
    }
  }
}
