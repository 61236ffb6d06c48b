/**
 * For the kit's own tests: a tiny PF4 driver over a few in-memory accounts and ticks (changes reported through its
 * `emit`), a listener on an ephemeral loopback port (plain or TLS), a manager-protocol client that keeps every frame
 * it receives (the raw text too, to see what was written first) and its close code, and a harness that starts a
 * tiny server per test and stops it and its clients afterwards.
 */
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import WebSocket from 'ws';
import { PF4_RESULT } from '../../../shared/resultCodes.js';
import type { ManagerEvent } from '../../../shared/protocol.js';
import { parseJson, stringifyJson } from '../../../shared/losslessJson.js';
import { BridgedServer, type BridgedServerOptions } from '../../../bridge/kit/bridgedServer.js';
import type { BridgeDriver, ChangeEmit } from '../../../bridge/kit/driver.js';
import { createBridgeListener, type ListenerOptions } from '../../../bridge/kit/listener.js';
import { ResultError } from '../../../bridge/kit/resultError.js';

export const PASSWORD = 'kit-test-password';

export interface TinyDriver extends BridgeDriver<{ calls: number }> {
  /** Reports a change, as the server behind a bridge would. */
  emit: ChangeEmit;
  users: Array<{ login: number; name: string }>;
}

/** A PF4 server with manager 1000 (PASSWORD), accounts 1 and 2, and the commands UserGet, Boom, Slow and Count. */
export function tinyDriver(overrides: Partial<BridgeDriver<{ calls: number }>> = {}): TinyDriver {
  let emit: ChangeEmit = () => {};
  const users = [
    { login: 1, name: 'One' },
    { login: 2, name: 'Two' },
  ];
  const driver: TinyDriver = {
    name: 'tiny',
    family: 'PF4',
    build: 7,
    events: ['users', 'ticks'],
    users,
    emit: (kind, op, record) => emit(kind, op, record),
    commands: {
      UserGet: (args) => {
        const user = users.find((u) => u.login === args.login);
        if (!user) throw new ResultError(PF4_RESULT.InvalidData, `login ${String(args.login)} not found`);
        return user;
      },
      Boom: () => {
        throw new Error('database password is hunter2');
      },
      Slow: async (args) => {
        await new Promise((r) => setTimeout(r, 5));
        return { echoed: args.value ?? null };
      },
      Count: (_args, session) => ++session.state.calls,
    },
    authenticate: ({ login, password }) =>
      login === 1000 && password === PASSWORD
        ? { ok: true, rights: ['admin', 'manager'] }
        : { ok: false, code: PF4_RESULT.InvalidData, message: 'invalid manager login or password' },
    snapshot: () => [
      { kind: 'users', rows: [...users] },
      { kind: 'ticks', rows: [] },
    ],
    subscribe: (to) => {
      emit = to;
      return () => {
        emit = () => {};
      };
    },
    openSession: () => ({ calls: 0 }),
    ...overrides,
  };
  return driver;
}

export interface Served {
  port: number;
  close(): Promise<void>;
}

export async function serve(servers: BridgedServer<any>[], options: ListenerOptions = {}): Promise<Served> {
  const http = createBridgeListener(servers, options);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    port: (http.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const server of servers) server.stop();
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}

/** One driver behind a listener; `server` to act on its sessions. */
export async function serveOne(
  driver: BridgeDriver<any>,
  options: BridgedServerOptions = {},
): Promise<Served & { server: BridgedServer<any> }> {
  const server = new BridgedServer(driver, options);
  return { ...(await serve([server])), server };
}

/** Resolves once `probe` holds, looking every few milliseconds; the bound only fails a hung test. */
export async function until(probe: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * A tiny server per test (`start`, with driver overrides and session limits) and its clients (`connect`), every one
 * stopped after the test; `logged` holds the server's log lines.
 */
export function kitHarness() {
  const running: Served[] = [];
  const clients: KitClient[] = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    for (const served of running.splice(0)) await served.close();
  });
  return async (
    overrides: Partial<BridgeDriver<{ calls: number }>> = {},
    limits: BridgedServerOptions['limits'] = {},
  ) => {
    const logged: Array<Record<string, unknown>> = [];
    const driver = tinyDriver({ log: (entry) => logged.push(entry), ...overrides });
    const served = await serveOne(driver, { limits });
    running.push(served);
    const connect = async () => {
      const client = await KitClient.connect(served.port, driver.name);
      clients.push(client);
      return client;
    };
    return { driver, server: served.server, port: served.port, connect, logged };
  };
}

export interface ErrorBody {
  code: number;
  message: string;
}

export class KitClient {
  readonly frames: string[] = [];
  readonly events: ManagerEvent[] = [];
  closeCode: number | null = null;
  closeReason = '';
  private nextId = 1;
  private readonly pending = new Map<number, (answer: { result?: unknown; error?: ErrorBody }) => void>();
  private readonly waiters = new Set<() => void>();

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const text = (data as Buffer).toString();
      this.frames.push(text);
      const frame = parseJson(text) as Record<string, unknown>;
      if ('event' in frame) this.events.push(frame as unknown as ManagerEvent);
      else this.pending.get(frame.id as number)?.(frame);
      for (const wake of this.waiters) wake();
    });
    ws.on('close', (code, reason) => {
      this.closeCode = code;
      this.closeReason = reason.toString();
      for (const wake of this.waiters) wake();
    });
  }

  /** A client of `ws://127.0.0.1:port/path`, or of `wss://` trusting the CA certificates `tls.ca`. */
  static connect(port: number, path: string, tls?: { ca: string | Buffer }): Promise<KitClient> {
    return new Promise((resolve, reject) => {
      const ws = tls
        ? new WebSocket(`wss://127.0.0.1:${port}/${path}`, { ca: tls.ca })
        : new WebSocket(`ws://127.0.0.1:${port}/${path}`);
      const client = new KitClient(ws);
      ws.once('open', () => resolve(client));
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused with ${res.statusCode}`)));
    });
  }

  get closed(): boolean {
    return this.closeCode !== null;
  }

  call(cmd: string, args?: Record<string, unknown>): Promise<{ result?: unknown; error?: ErrorBody }> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, (answer) => {
        this.pending.delete(id);
        resolve(answer);
      });
      this.ws.send(stringifyJson({ id, cmd, args }));
    });
  }

  async ok<T = unknown>(cmd: string, args?: Record<string, unknown>): Promise<T> {
    const answer = await this.call(cmd, args);
    if (answer.error) throw new Error(`${cmd} failed: ${answer.error.code} ${answer.error.message}`);
    return answer.result as T;
  }

  async fails(cmd: string, args?: Record<string, unknown>): Promise<ErrorBody> {
    const answer = await this.call(cmd, args);
    if (!answer.error) throw new Error(`${cmd} succeeded: ${JSON.stringify(answer.result)}`);
    return answer.error;
  }

  login(args: Record<string, unknown> = {}): Promise<{ result?: unknown; error?: ErrorBody }> {
    return this.call('login', { login: 1000, password: PASSWORD, ...args });
  }

  /** Resolves once `probe` holds; the bound only fails a hung test. */
  waitFor(probe: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
    if (probe()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`timed out waiting for ${what}`));
      }, timeoutMs);
      const check = () => {
        if (!probe()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      this.waiters.add(check);
    });
  }

  /** Waits for the snapshot's end. */
  resynced(): Promise<void> {
    return this.waitFor(() => this.events.some((e) => e.event === 'resync' && e.op === 'end'), "the snapshot's end");
  }

  /** The events after the snapshot's end. */
  live(): ManagerEvent[] {
    const end = this.events.findIndex((e) => e.event === 'resync' && e.op === 'end');
    return this.events.slice(end + 1);
  }

  close(): void {
    this.ws.close();
  }
}
