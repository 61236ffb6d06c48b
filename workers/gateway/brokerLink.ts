/**
 * One multiplexed WebSocket from a link object to its broker. Calls are numbered frames answered by id; the socket
 * opens lazily on the first call, concurrent callers share one connect attempt, and when it closes every pending call
 * is answered at once (`NoConnect`, mutating ones with an unknown outcome) and the next call reconnects. Late outcomes
 * of calls under an Idempotency-Key (`late` frames, no id) go to `onLate`.
 */
import type { CallFrame, ResultFrame, CallFailed, LateFrame, PagingResult } from '../../shared/frames.js';
import { LINK_PATH } from '../../shared/frames.js';
import type { RawOk } from './shapeAnswer.js';
import { parseJson, stringifyJson } from '../../shared/losslessJson.js';

/** Extra time the object waits beyond the call's budget for the broker's own time-out answer before giving up. */
export const LINK_GRACE_MS = 1000;
/** Upper bound on establishing the link, so a black-holed broker does not eat a long call budget. */
export const CONNECT_TIMEOUT_MS = 5000;

interface Pending {
  resolve(result: ResultFrame | RawOk): void;
  /** When the call is given up on (Date.now() based): budget plus grace. */
  deadline: number;
  budgetMs: number;
  mutating: boolean;
  /** The caller takes `data` as the broker's JSON text when the frame allows it (`RawOk`). */
  raw: boolean;
  /** Paged calls: the frame's head must carry `paging` for `data` to be taken unparsed. */
  paged: boolean;
}

export type { RawOk } from './shapeAnswer.js';

export type LinkResult = Omit<CallOk, 'id'> | LinkFailure;

/**
 * A failure as the link tells it: the broker's own, or one of the link's, marked for the broker set that chooses
 * where a call goes (`brokerSet.ts`) and stripped before it leaves the set: `notSent` when the link could not be
 * opened (nothing was sent), `linkLost` when the link dropped or was closed with the call in flight.
 */
export type LinkFailure = Omit<CallFailed, 'id'> & { notSent?: true; linkLost?: true };
type CallOk = Extract<ResultFrame, { ok: true }>;

export interface CallOptions {
  /** Answer a success as `RawOk` when the frame's `data` can be taken as text (see `OK_HEAD`). */
  raw?: boolean;
  paged?: boolean;
  /** Give the call up this long after sending instead of at its budget plus `LINK_GRACE_MS` (heartbeats). */
  waitMs?: number;
}

/**
 * The head of a success frame whose `data` comes last (the broker writes `paging` before `data`): `data`'s JSON text
 * is then everything after the head but the closing brace. A frame of any other layout is parsed whole. The paging
 * object holds a cursor and a flag only, so it cannot contain braces.
 */
const OK_HEAD = /^\{"id":(\d+),"ok":true,(?:"paging":(\{[^{}]*\}),)?"data":/;

export class BrokerLink {
  private socket: WebSocket | undefined;
  private connecting: Promise<WebSocket> | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  constructor(
    readonly brokerUrl: string,
    private readonly secret: string,
    private readonly onLate: (late: LateFrame['late']) => void = () => {},
    /** How long opening the link may take (shorter when another broker could take the calls instead). */
    private readonly connectTimeoutMs = CONNECT_TIMEOUT_MS,
  ) {}

  /** Sends one call and resolves with the broker's answer, a time-out, or a link failure; never rejects. */
  call(frame: Omit<CallFrame, 'id'>, mutating: boolean): Promise<LinkResult>;
  call(frame: Omit<CallFrame, 'id'>, mutating: boolean, options: CallOptions): Promise<LinkResult | RawOk>;
  async call(frame: Omit<CallFrame, 'id'>, mutating: boolean, options: CallOptions = {}): Promise<LinkResult | RawOk> {
    let socket: WebSocket;
    try {
      socket = this.socket ?? (await (this.connecting ??= this.connect()));
    } catch (err) {
      // Nothing was sent, so even a mutating call has a known outcome: not applied.
      return { ...fail('NoConnect', `broker unreachable: ${(err as Error).message}`), notSent: true };
    }
    const id = this.nextId++;
    return new Promise<LinkResult | RawOk>((resolve) => {
      const deadline = Date.now() + (options.waitMs ?? frame.timeoutMs + LINK_GRACE_MS);
      this.pending.set(id, {
        resolve: (r) => resolve('dataJson' in r ? r : strip(r)), deadline, budgetMs: frame.timeoutMs, mutating,
        raw: options.raw === true, paged: options.paged === true,
      });
      // One timer per link, armed for the earliest deadline, rather than one per call.
      if (deadline < this.armedFor) this.arm(deadline);
      try {
        socket.send(stringifyJson({ ...frame, id } satisfies CallFrame));
      } catch {
        this.pending.delete(id);
        resolve({ ...fail('NoConnect', 'broker link lost'), linkLost: true });
      }
    });
  }

  /** Link-level frames the broker pushes without an id that are not late outcomes (replication), raw text. */
  onPush: ((frame: Record<string, unknown>) => void) | undefined;

  /** Called once each time a link opens, before any answer arrives on it. */
  onOpen: ((send: (text: string) => void) => void) | undefined;

  /** Called when the link drops or is closed. */
  onClose: (() => void) | undefined;

  private timer: ReturnType<typeof setTimeout> | undefined;
  private armedFor = Infinity;

  private arm(at: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.armedFor = at;
    this.timer = setTimeout(() => this.expire(), Math.max(0, at - Date.now()));
  }

  /** Answers every call past its deadline with a time-out and re-arms for the next one. */
  private expire(): void {
    this.timer = undefined;
    this.armedFor = Infinity;
    const now = Date.now();
    let next = Infinity;
    for (const [id, p] of this.pending) {
      if (p.deadline <= now) {
        this.pending.delete(id);
        p.resolve({
          id, ...fail('NoConnect', `no answer from the trading platform within ${p.budgetMs / 1000} s`), timedOut: true,
          ...(p.mutating ? { outcome: 'unknown' as const } : {}),
        });
      } else if (p.deadline < next) {
        next = p.deadline;
      }
    }
    if (next !== Infinity) this.arm(next);
    this.closeIfIdle();
  }

  /**
   * Closes the link as soon as no call waits on it (a draining broker: what it still runs is answered first, then the
   * link is let go, which is what the broker waits for before it exits). A call sent meanwhile reopens it.
   */
  closeWhenIdle(): void {
    this.closeIdle = true;
    this.closeIfIdle();
  }

  private closeIdle = false;

  private closeIfIdle(): void {
    if (!this.closeIdle || this.pending.size > 0) return;
    this.closeIdle = false;
    if (this.socket) this.close();
  }

  close(): void {
    const s = this.socket;
    this.socket = undefined;
    if (s) { try { s.close(1000, 'closing'); } catch { /* already closed */ } }
    this.failAll('broker link closed');
    if (s) this.onClose?.();
  }

  get pendingCount(): number { return this.pending.size; }

  get connected(): boolean { return this.socket !== undefined; }

  private async connect(): Promise<WebSocket> {
    // The abort signal stays bound to the upgraded socket: it must only bound the handshake, never the link's life.
    const handshake = new AbortController();
    const timer = setTimeout(() => handshake.abort(new Error(`no answer within ${this.connectTimeoutMs} ms`)), this.connectTimeoutMs);
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
      this.closeIdle = false;
      this.onOpen?.((text) => ws.send(text));
      return ws;
    } finally {
      clearTimeout(timer);
      this.connecting = undefined;
    }
  }

  private onMessage(data: string | ArrayBuffer): void {
    const text = typeof data === 'string' ? data : new TextDecoder().decode(data);
    const head = OK_HEAD.exec(text);
    if (head !== null && text.charCodeAt(text.length - 1) === 125 /* } */) {
      const p = this.pending.get(Number(head[1]));
      if (p?.raw && p.paged === (head[2] !== undefined)) {
        let paging: PagingResult | undefined;
        try {
          paging = head[2] === undefined ? undefined : JSON.parse(head[2]);
        } catch {
          paging = undefined;
        }
        if (head[2] === undefined || isPaging(paging)) {
          this.pending.delete(Number(head[1]));
          p.resolve(paging ? { ok: true, dataJson: text.slice(head[0].length, -1), paging } : { ok: true, dataJson: text.slice(head[0].length, -1) });
          this.closeIfIdle();
          return;
        }
      }
    }
    let frame: Partial<ResultFrame> & Partial<LateFrame>;
    try {
      frame = parseJson(text) as Partial<ResultFrame> & Partial<LateFrame>;
    } catch {
      return; // a frame we cannot read cannot be matched to a call either; its caller times out
    }
    // Not an object (`null`, a number, a string): no call and no push can be read from it.
    if (frame === null || typeof frame !== 'object') return;
    if (typeof frame.id !== 'number') {
      if (frame.late && typeof frame.late.callId === 'string') this.onLate(frame.late);
      else this.onPush?.(frame as Record<string, unknown>);
      return; // hello and other link-level frames
    }
    const p = this.pending.get(frame.id);
    if (!p) return; // answered after the object gave up on it
    this.pending.delete(frame.id);
    // The link's own marks are never taken from a broker's frame.
    delete (frame as LinkFailure).notSent;
    delete (frame as LinkFailure).linkLost;
    p.resolve(frame as ResultFrame);
    this.closeIfIdle();
  }

  private onLost(ws: WebSocket): void {
    if (this.socket !== ws) return;
    this.socket = undefined;
    this.failAll('broker link lost');
    this.onClose?.();
  }

  private failAll(message: string): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = Infinity;
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      p.resolve({
        id, ok: false, error: { code: 'NoConnect', managerCode: null, message }, ...(p.mutating ? { outcome: 'unknown' as const } : {}),
        linkLost: true,
      } as ResultFrame);
    }
  }
}

function fail(code: 'NoConnect', message: string): Omit<CallFailed, 'id'> {
  return { ok: false, error: { code, managerCode: null, message } };
}

function isPaging(v: unknown): v is PagingResult {
  const p = v as Partial<PagingResult> | null | undefined;
  return typeof p?.hasMore === 'boolean' && (p.nextCursor === null || typeof p.nextCursor === 'string');
}

function strip(r: ResultFrame): LinkResult {
  const { id: _id, ...rest } = r;
  return rest;
}
