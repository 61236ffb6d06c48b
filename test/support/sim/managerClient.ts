/**
 * A small manager-protocol client for the simulator's tests: sends requests, matches answers by id and keeps every
 * event it receives so a test can wait for the one it expects.
 */
import WebSocket from 'ws';
import type { ManagerEvent } from '../../../shared/protocol.js';
import { parseJson, stringifyJson } from '../../../shared/losslessJson.js';

export interface ErrorAnswer {
  code: number;
  message: string;
}

export class ManagerClient {
  readonly events: ManagerEvent[] = [];
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: { result?: unknown; error?: ErrorAnswer }) => void }>();
  private readonly waiters = new Set<() => void>();
  closed = false;
  closeCode: number | null = null;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      // Lossless, as the broker reads frames: PF5 ids beyond 2^53 − 1 are exact bigints.
      const frame = parseJson((data as Buffer).toString()) as Record<string, unknown>;
      if ('event' in frame) this.events.push(frame as unknown as ManagerEvent);
      else this.pending.get(frame.id as number)?.resolve(frame);
      for (const wake of this.waiters) wake();
    });
    ws.on('close', (code) => {
      this.closed = true;
      this.closeCode = code;
      for (const wake of this.waiters) wake();
    });
  }

  /** `localAddress` binds the client's end, so a test can come from another loopback address (127.0.0.2). */
  static connect(port: number, server: string, options: { localAddress?: string } = {}): Promise<ManagerClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(
        `ws://127.0.0.1:${port}/${server}`,
        options.localAddress ? { localAddress: options.localAddress } : {},
      );
      const client = new ManagerClient(ws);
      ws.once('open', () => resolve(client));
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused with ${res.statusCode}`)));
    });
  }

  /** Sends a request and resolves with its raw answer (result or error). */
  call(cmd: string, args?: Record<string, unknown>): Promise<{ result?: unknown; error?: ErrorAnswer }> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, {
        resolve: (v) => {
          this.pending.delete(id);
          resolve(v);
        },
      });
      this.ws.send(stringifyJson({ id, cmd, args }));
    });
  }

  async ok<T = unknown>(cmd: string, args?: Record<string, unknown>): Promise<T> {
    const answer = await this.call(cmd, args);
    if (answer.error) throw new Error(`${cmd} failed: ${answer.error.code} ${answer.error.message}`);
    return answer.result as T;
  }

  async fails(cmd: string, args?: Record<string, unknown>): Promise<ErrorAnswer> {
    const answer = await this.call(cmd, args);
    if (!answer.error) throw new Error(`${cmd} unexpectedly succeeded`);
    return answer.error;
  }

  /** Resolves once `predicate` holds (checked on every frame and on close), or rejects after `timeoutMs`. */
  waitFor(predicate: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
    if (predicate()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!predicate()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`timed out waiting for ${what}`));
      }, timeoutMs);
      this.waiters.add(check);
    });
  }

  waitForEvent(match: (e: ManagerEvent) => boolean, timeoutMs = 5000): Promise<ManagerEvent> {
    return this.waitFor(() => this.events.some(match), timeoutMs, 'event').then(
      () => this.events.find(match) as ManagerEvent,
    );
  }

  waitForClose(timeoutMs = 5000): Promise<void> {
    return this.waitFor(() => this.closed, timeoutMs, 'close');
  }

  close(): void {
    if (!this.closed) this.ws.terminate();
  }
}

export async function postControl(port: number, path: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`http://127.0.0.1:${port}/control/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

export async function getState(port: number, server: string): Promise<any> {
  const res = await fetch(`http://127.0.0.1:${port}/control/${server}/state`);
  return res.json();
}
