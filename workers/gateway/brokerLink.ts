/**
 * One multiplexed WebSocket from a link object to its broker. Calls are numbered frames answered by id; the socket
 * opens lazily on the first call, concurrent callers share one connect attempt, and when it closes every pending call
 * is answered at once (`NoConnect`, mutating ones with an unknown outcome) and the next call reconnects. Late outcomes
 * of calls under an Idempotency-Key (`late` frames, no id) go to `onLate`.
 */
import type { CallFrame, ResultFrame, CallFailed, LateFrame, PagingResult } from '../../shared/frames.js';
import { LINK_PATH } from '../../shared/frames.js';
import type { RawBytesOk, RawOk } from './shapeAnswer.js';
import { parseJson, stringifyJson } from '../../shared/losslessJson.js';

/** Extra time the object waits beyond the call's budget for the broker's own time-out answer before giving up. */
export const LINK_GRACE_MS = 1000;
/** Upper bound on establishing the link, so a black-holed broker does not eat a long call budget. */
export const CONNECT_TIMEOUT_MS = 5000;

interface Pending {
  resolve(result: ResultFrame | RawOk | RawBytesOk): void;
  /** When the call is given up on (Date.now() based): budget plus grace. */
  deadline: number;
  budgetMs: number;
  mutating: boolean;
  /** The caller takes `data` unparsed when the frame allows it: as text (`RawOk`), a binary frame's as bytes (`RawBytesOk`). */
  raw: boolean;
  /** Paged calls: the frame's head must carry `paging` for `data` to be taken unparsed. */
  paged: boolean;
}

export type { RawBytesOk, RawOk } from './shapeAnswer.js';

export type LinkResult = Omit<CallOk, 'id'> | LinkFailure;

/**
 * A failure as the link tells it: the broker's own, or one of the link's, marked for the broker set that chooses
 * where a call goes (`brokerSet.ts`) and stripped before it leaves the set: `notSent` when the link could not be
 * opened (nothing was sent), `linkLost` when the link dropped or was closed with the call in flight.
 */
export type LinkFailure = Omit<CallFailed, 'id'> & { notSent?: true; linkLost?: true };
type CallOk = Extract<ResultFrame, { ok: true }>;

export interface CallOptions {
  /** Answer a success as `RawOk` or `RawBytesOk` when the frame's `data` can be taken unparsed (see `OK_HEAD`). */
  raw?: boolean;
  paged?: boolean;
  /** Give the call up this long after sending instead of at its budget plus `LINK_GRACE_MS` (heartbeats). */
  waitMs?: number;
}

/**
 * The head of a success frame whose `data` comes last (the broker writes `pos` and `paging` before `data`): `data`'s
 * JSON text is then everything after the head but the closing brace. A frame of any other layout is parsed whole. The paging
 * object holds a cursor and a flag only, so it cannot contain braces.
 */
const OK_HEAD = /^\{"id":(\d+),"ok":true,(?:"pos":"(\d{1,15}-\d{1,15})",)?(?:"paging":(\{[^{}]*\}),)?"data":/;
/** Enough of a binary frame's start to hold any `OK_HEAD` (an id, and paging: a cursor and a flag). */
const HEAD_BYTES = 1024;
/** A head whose characters are its bytes: one of other characters is read from the frame's text instead. */
const ASCII = /^[\x20-\x7e]*$/;
const decoder = new TextDecoder();

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
  call(frame: Omit<CallFrame, 'id'>, mutating: boolean, options: CallOptions): Promise<LinkResult | RawOk | RawBytesOk>;
  async call(
    frame: Omit<CallFrame, 'id'>,
    mutating: boolean,
    options: CallOptions = {},
  ): Promise<LinkResult | RawOk | RawBytesOk> {
    let socket: WebSocket;
    try {
      socket = this.socket ?? (await (this.connecting ??= this.connect()));
    } catch (err) {
      // Nothing was sent, so even a mutating call has a known outcome: not applied.
      return { ...fail('NoConnect', `broker unreachable: ${(err as Error).message}`), notSent: true };
    }
    const id = this.nextId++;
    return new Promise<LinkResult | RawOk | RawBytesOk>((resolve) => {
      const deadline = Date.now() + (options.waitMs ?? frame.timeoutMs + LINK_GRACE_MS);
      this.pending.set(id, {
        resolve: (r) => resolve('id' in r ? strip(r) : r),
        deadline,
        budgetMs: frame.timeoutMs,
        mutating,
        raw: options.raw === true,
        paged: options.paged === true,
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
          id,
          ...fail('NoConnect', `no answer from the trading platform within ${p.budgetMs / 1000} s`),
          timedOut: true,
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
    if (s) {
      try {
        s.close(1000, 'closing');
      } catch {
        /* already closed */
      }
    }
    this.failAll('broker link closed');
    if (s) this.onClose?.();
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  get connected(): boolean {
    return this.socket !== undefined;
  }

  private async connect(): Promise<WebSocket> {
    // The abort signal stays bound to the upgraded socket: it must only bound the handshake, never the link's life.
    const handshake = new AbortController();
    const timer = setTimeout(
      () => handshake.abort(new Error(`no answer within ${this.connectTimeoutMs} ms`)),
      this.connectTimeoutMs,
    );
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
      ws.addEventListener('message', (ev) => this.onMessage(ev.data as string | ArrayBuffer));
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
    let text: string;
    if (typeof data === 'string') {
      text = data;
      const head = OK_HEAD.exec(text);
      if (
        head !== null &&
        text.charCodeAt(text.length - 1) === 125 /* } */ &&
        this.takeRaw(head, () => ({ dataJson: text.slice(head[0].length, -1) }))
      )
        return;
    } else {
      // A binary frame: the same JSON as UTF-8 (a large answer). Its head is read; its `data` stays bytes.
      const bytes = new Uint8Array(data);
      const head = OK_HEAD.exec(decoder.decode(bytes.subarray(0, HEAD_BYTES)));
      if (
        head !== null &&
        ASCII.test(head[0]) &&
        bytes[bytes.length - 1] === 125 /* } */ &&
        this.takeRaw(head, () => ({ dataBytes: bytes.subarray(head[0].length, bytes.length - 1) }))
      )
        return;
      text = decoder.decode(bytes);
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
      else this.onPush?.(frame);
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

  /**
   * Answers the call of a success frame whose head is `head` (`OK_HEAD`) with its `data` unparsed, when the call takes
   * it so (`raw`, and paging exactly when the call is paged); false when the frame is to be parsed whole instead.
   */
  private takeRaw(head: RegExpExecArray, data: () => { dataJson: string } | { dataBytes: Uint8Array }): boolean {
    const id = Number(head[1]);
    const p = this.pending.get(id);
    if (!p?.raw || p.paged !== (head[3] !== undefined)) return false;
    let paging: PagingResult | undefined;
    if (head[3] !== undefined) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(head[3]);
      } catch {
        return false;
      }
      if (!isPaging(parsed)) return false;
      paging = parsed;
    }
    this.pending.delete(id);
    const pos = head[2] !== undefined ? { pos: head[2] } : {};
    p.resolve(paging ? { ok: true, ...pos, ...data(), paging } : { ok: true, ...pos, ...data() });
    this.closeIfIdle();
    return true;
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
        id,
        ok: false,
        error: { code: 'NoConnect', managerCode: null, message },
        ...(p.mutating ? { outcome: 'unknown' as const } : {}),
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
