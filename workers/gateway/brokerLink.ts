/**
 * One multiplexed WebSocket from a link object to its broker. Calls are numbered frames answered by id; the socket
 * opens lazily on the first call, concurrent callers share one connect attempt, and when it closes every pending call
 * is answered at once (`NoConnect`, mutating ones with an unknown outcome) and the next call reconnects. Late outcomes
 * of calls under an Idempotency-Key (`late` frames, no id) go to `onLate`.
 */
import type { CallFrame, ResultFrame, CallFailed, LateFrame } from '../../shared/frames.js';
import { LINK_PATH } from '../../shared/frames.js';
import { parseJson, stringifyJson } from '../../shared/losslessJson.js';

/** Extra time the object waits beyond the call's budget for the broker's own time-out answer before giving up. */
export const LINK_GRACE_MS = 1000;
/** Upper bound on establishing the link, so a black-holed broker does not eat a long call budget. */
const CONNECT_TIMEOUT_MS = 5000;

interface Pending {
  resolve(result: ResultFrame): void;
  timer: ReturnType<typeof setTimeout>;
  mutating: boolean;
}

export type LinkResult = Omit<CallOk, 'id'> | Omit<CallFailed, 'id'>;
type CallOk = Extract<ResultFrame, { ok: true }>;

export class BrokerLink {
  private socket: WebSocket | undefined;
  private connecting: Promise<WebSocket> | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  constructor(
    readonly brokerUrl: string,
    private readonly secret: string,
    private readonly onLate: (late: LateFrame['late']) => void = () => {},
  ) {}

  /** Sends one call and resolves with the broker's answer, a time-out, or a link failure; never rejects. */
  async call(frame: Omit<CallFrame, 'id'>, mutating: boolean): Promise<LinkResult> {
    let socket: WebSocket;
    try {
      socket = this.socket ?? (await (this.connecting ??= this.connect()));
    } catch (err) {
      // Nothing was sent, so even a mutating call has a known outcome: not applied.
      return fail('NoConnect', `broker unreachable: ${(err as Error).message}`);
    }
    const id = this.nextId++;
    return new Promise<LinkResult>((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        resolve({ ...fail('NoConnect', `no answer from the trading platform within ${frame.timeoutMs / 1000} s`), timedOut: true, ...(mutating ? { outcome: 'unknown' as const } : {}) });
      }, frame.timeoutMs + LINK_GRACE_MS);
      this.pending.set(id, { resolve: (r) => resolve(strip(r)), timer, mutating });
      try {
        socket.send(stringifyJson({ ...frame, id } satisfies CallFrame));
      } catch {
        this.pending.delete(id);
        clearTimeout(timer);
        resolve(fail('NoConnect', 'broker link lost'));
      }
    });
  }

  close(): void {
    const s = this.socket;
    this.socket = undefined;
    if (s) { try { s.close(1000, 'closing'); } catch { /* already closed */ } }
    this.failAll('broker link closed');
  }

  get pendingCount(): number { return this.pending.size; }

  get connected(): boolean { return this.socket !== undefined; }

  private async connect(): Promise<WebSocket> {
    // The abort signal stays bound to the upgraded socket: it must only bound the handshake, never the link's life.
    const handshake = new AbortController();
    const timer = setTimeout(() => handshake.abort(new Error(`no answer within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
    try {
      const url = new URL(LINK_PATH, this.brokerUrl.endsWith('/') ? this.brokerUrl : `${this.brokerUrl}/`);
      const res = await fetch(url.toString(), {
        headers: { Upgrade: 'websocket', Authorization: `Bearer ${this.secret}` },
        signal: handshake.signal,
      });
      clearTimeout(timer);
      const ws = res.webSocket;
      if (!ws) throw new Error(`link refused with HTTP ${res.status}`);
      ws.accept();
      ws.addEventListener('message', (ev) => this.onMessage(ev.data));
      ws.addEventListener('close', () => this.onLost(ws));
      ws.addEventListener('error', () => this.onLost(ws));
      this.socket = ws;
      return ws;
    } finally {
      clearTimeout(timer);
      this.connecting = undefined;
    }
  }

  private onMessage(data: string | ArrayBuffer): void {
    let frame: Partial<ResultFrame> & Partial<LateFrame>;
    try {
      frame = parseJson(typeof data === 'string' ? data : new TextDecoder().decode(data)) as Partial<ResultFrame> & Partial<LateFrame>;
    } catch {
      return; // a frame we cannot read cannot be matched to a call either; its caller times out
    }
    if (typeof frame.id !== 'number') {
      if (frame.late && typeof frame.late.callId === 'string') this.onLate(frame.late);
      return; // hello and other link-level frames
    }
    const p = this.pending.get(frame.id);
    if (!p) return; // answered after the object gave up on it
    this.pending.delete(frame.id);
    clearTimeout(p.timer);
    p.resolve(frame as ResultFrame);
  }

  private onLost(ws: WebSocket): void {
    if (this.socket !== ws) return;
    this.socket = undefined;
    this.failAll('broker link lost');
  }

  private failAll(message: string): void {
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      clearTimeout(p.timer);
      p.resolve({ id, ok: false, error: { code: 'NoConnect', managerCode: null, message }, ...(p.mutating ? { outcome: 'unknown' as const } : {}) });
    }
  }
}

function fail(code: 'NoConnect', message: string): Omit<CallFailed, 'id'> {
  return { ok: false, error: { code, managerCode: null, message } };
}

function strip(r: ResultFrame): LinkResult {
  const { id: _id, ...rest } = r;
  return rest;
}
