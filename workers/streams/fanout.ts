/**
 * The fan-out of a stream object to its clients, free of the Durable Object so it is unit-tested alone
 * (`fanout.test.ts`).
 *
 * Every event is serialized once (`encode`) and its text shared by every client. Besides the broker's events the
 * stream carries the object's own `resync` notices after a gap in its subscription (`ResyncEvent`), which only the
 * clients of record changes are sent. Events are not written one by one: the object's passes over its clients give
 * each client everything it lacks in one write (SSE) or one WebSocket message (hub), at most once every `FLUSH_MS` per
 * client, so under load each write carries more events. Clients asking for the same thing and lacking the same events
 * share the same encoded chunk.
 *
 * Server-Sent Events (`SseSink`): a client has at most one write outstanding. Its stream is a native
 * `IdentityTransformStream` without a queue, so a write completes when the response took the bytes. A pass that
 * finds a write outstanding leaves the client for a later one; a client found so twice running, or lacking more than
 * half the object's ring, is slow: what comes for it is held, ticks conflated per symbol (the latest price replaces
 * the older one) and every other event kept in order, and sent in one write once the outstanding one completes. A
 * client holding more than `MAX_BEHIND` non-tick events, or owed events the object no longer holds (`behind`), is
 * sent `overflow` and disconnected; if even that cannot be written within `OVERFLOW_GRACE_MS` the stream is aborted.
 *
 * SignalR hub sockets (`HubFlow`): a socket accepted with the Hibernation API offers no `bufferedAmount` or write
 * completion (workerd's `send` queues without bound and tells nothing), so what the hub learns of a socket's reading
 * comes from the client. Two ways, by the client's choice:
 *
 * - Flow checks, for a client that asks for them (`EnableFlowControl()`, `FLOW_CONTROL_METHOD`): with the data it
 *   sends, at most every `PROBE_MS` (250 ms), the object adds an invocation of `OnFlowCheck` carrying an invocation id;
 *   the client answers every server invocation that has an id with a completion, in order, after it read what came
 *   before. A socket whose probe is not answered within `SLOW_MS` is slow.
 * - Its keep-alive, for every other client (a stock SignalR client, which would log warnings at an invocation it has no
 *   handler for): such a client sends a ping at least every 15 s while it receives (its `keepAliveInterval`), so a
 *   socket sent data and heard nothing from for `STREAM_HUB_QUIET_SECONDS` (30 s, the reference server's client
 *   time-out) is slow. It is never sent an invocation it did not ask for by subscribing.
 *
 * From the moment a socket is slow its ticks are conflated per symbol and its other events held (counted) until it is
 * heard from (the answer, or for a client without checks any message), and past `MAX_BEHIND` non-tick events it is
 * sent a close message with the error and closed, never skipped. A socket that is sent nothing is not judged, so an
 * idle client still costs no CPU.
 */
import type { Region } from '../../shared/regions.js';
import type { StreamEvent, StreamTopic } from '../../shared/streams.js';
import { stringifyJson } from '../../shared/losslessJson.js';
import { WORKER_DEFAULTS } from '../../shared/environment.js';

/** The least time between two writes (or hub messages) of events to one client, unless STREAM_FLUSH_MS says otherwise. */
export const FLUSH_MS = WORKER_DEFAULTS.STREAM_FLUSH_MS;
/** Non-tick events a client may have waiting before it is told it fell behind and is disconnected (the default). */
export const MAX_BEHIND = WORKER_DEFAULTS.STREAM_MAX_BEHIND;
let maxBehind = MAX_BEHIND;

/** The limit of this isolate's stream objects, from the edge's configuration (`STREAM_MAX_BEHIND`). */
export function setMaxBehind(limit: number): void {
  maxBehind = limit;
}
/** How long an overflowing SSE client gets to take its `overflow` event before its stream is aborted. */
export const OVERFLOW_GRACE_MS = 5_000;
/**
 * A hub socket that asked for flow checks is probed at most this often (and only while it is sent something), and one
 * whose probe is unanswered for longer than SLOW_MS is slow: together they bound how far behind the latest prices
 * such a client can read (what is in flight beyond its last answer), which TCP alone does not (a socket's kernel
 * buffers hold seconds of ticks).
 */
export const PROBE_MS = 250;
export const SLOW_MS = 250;
export const PROBE_TARGET = 'OnFlowCheck';
/** The hub method a client invokes to be sent flow checks (it must then answer `OnFlowCheck`). */
export const FLOW_CONTROL_METHOD = 'EnableFlowControl';
/**
 * A socket without flow checks that was sent data and has sent nothing for this long is slow (the default): twice the
 * stock SignalR client's 15 s keep-alive (it pings when due as soon as it receives something), and the reference
 * server's client time-out. What such a client may have queued is at most this long of its subscriptions.
 */
export const QUIET_MS = WORKER_DEFAULTS.STREAM_HUB_QUIET_SECONDS * 1000;
let quietMs = QUIET_MS;

/** The quiet time of this isolate's stream objects, from the edge's configuration (`STREAM_HUB_QUIET_SECONDS`). */
export function setQuietMs(ms: number): void {
  quietMs = ms;
}
const RS = '\u001e';

/**
 * The stream object a client goes to: the one a `Last-Event-ID` names (its first two hex digits are the shard), so a
 * reconnect finds the events it missed, else any of the platform's `shards`.
 */
export function streamShard(lastEventId: string | null, shards: number, random: () => number = Math.random): number {
  const m = lastEventId ? /^([0-9a-f]{2})[0-9a-f]{6}-\d+$/.exec(lastEventId.trim()) : null;
  const named = m ? parseInt(m[1], 16) : -1;
  return named >= 0 && named < shards ? named : Math.floor(random() * shards);
}

/**
 * The name of a platform's stream object `shard` in `region`, where it serves that region's clients
 * (`<platform>@<region>`, and `<platform>@<region>#stream<shard>` past shard 0).
 */
export function streamObjectName(platform: string, region: Region, shard: number): string {
  return shard === 0 ? `${platform}@${region}` : `${platform}@${region}#stream${shard}`;
}

/**
 * The stream object's own notice that events may have been missed (its broker subscription was lost or moved to
 * another broker, whose event stream is independent): held in the ring as any event, sent to the clients that asked
 * for record changes (`RESYNC_TOPICS`) as an SSE `resync` event or a hub `OnResync` invocation.
 */
export interface ResyncEvent {
  topic: 'resync';
  data: { message: string };
}

/** What the ring holds: the broker's events and the object's resync notices. */
export type RingEvent = StreamEvent | ResyncEvent;

/** Topics whose clients are told to resync after a gap; ticks and symbol records are superseded by the next one. */
export const RESYNC_TOPICS: ReadonlySet<StreamTopic> = new Set([
  'trades',
  'users',
  'margin',
  'positions',
  'orders',
  'deals',
]);

const HUB_TARGETS: Partial<Record<RingEvent['topic'], string>> = {
  ticks: 'OnTick',
  status: 'OnConnectionStatus',
  resync: 'OnResync',
};

/** One event of the platform's stream, serialized once for every client. */
export class Encoded {
  /** The event's payload as JSON. */
  readonly json: string;
  /** The whole SSE event. */
  readonly sse: string;
  private hubText: string | undefined;
  constructor(
    readonly seq: number,
    readonly id: string,
    readonly event: RingEvent,
  ) {
    this.json = stringifyJson(event.data);
    this.sse = `id: ${id}\nevent: ${event.topic}\ndata: ${this.json}\n\n`;
  }

  get topic(): RingEvent['topic'] {
    return this.event.topic;
  }
  get symbol(): string | undefined {
    return this.event.topic === 'ticks' ? this.event.data.symbol : undefined;
  }

  /** The hub's invocation of the event shared by every socket (`OnTick`, `OnConnectionStatus`, `OnResync`). */
  hubInvocation(): string {
    this.hubText ??= `{"type":1,"target":"${HUB_TARGETS[this.topic] ?? 'OnConnectionStatus'}","arguments":[${this.json}]}${RS}`;
    return this.hubText;
  }

  /** The event as an item of one socket's server stream. */
  hubItem(invocationId: string): string {
    return `{"type":2,"invocationId":${JSON.stringify(invocationId)},"item":${this.json}}${RS}`;
  }
}

/** What one SSE client receives: topics, and for ticks the symbols (null: every symbol). */
export interface Interest {
  topics: Set<StreamTopic>;
  symbols: Set<string> | null;
}

export function interestKey(i: Interest): string {
  return `${[...i.topics].sort().join(',')}|${i.symbols ? [...i.symbols].sort().join(',') : '*'}`;
}

export function wants(i: Interest, e: Encoded): boolean {
  const topic = e.topic;
  if (topic === 'status') return true;
  if (topic === 'resync') return wantsResync(i.topics);
  if (!i.topics.has(topic)) return false;
  return topic !== 'ticks' || i.symbols === null || i.symbols.has(e.symbol as string);
}

const encoder = new TextEncoder();

/** Whether a client of these topics is told to resync after a gap (it asked for record changes). */
export function wantsResync(topics: Iterable<StreamTopic>): boolean {
  for (const t of topics) if (RESYNC_TOPICS.has(t)) return true;
  return false;
}

/** The batch's events an interest wants, as one chunk (null: none). */
export function chunkFor(interest: Interest, batch: readonly Encoded[]): Uint8Array | null {
  let text = '';
  for (const e of batch) if (wants(interest, e)) text += e.sse;
  return text === '' ? null : encoder.encode(text);
}

/** Held output of a slow client: ticks keyed by what they conflate on, other events in order. */
class Held {
  private readonly map = new Map<string, string>();
  private serial = 0;
  nonTicks = 0;
  get size(): number {
    return this.map.size;
  }
  tick(key: string, text: string): void {
    this.map.delete(key); // re-inserted last: what is sent keeps the order of the latest events
    this.map.set(key, text);
  }
  other(text: string, key = `e${this.serial++}`): void {
    this.map.set(key, text);
    this.nonTicks++;
  }
  raw(text: string): void {
    this.map.set(`r${this.serial++}`, text);
  }
  drop(predicate: (key: string) => boolean): void {
    for (const key of [...this.map.keys()]) if (predicate(key)) this.map.delete(key);
  }
  take(): string {
    let text = '';
    for (const t of this.map.values()) text += t;
    this.map.clear();
    this.nonTicks = 0;
    return text;
  }
}

/** One Server-Sent Events client. */
export class SseSink {
  readonly key: string;
  private readonly held = new Held();
  private busy = false;
  closed = false;
  /** Events and bytes handed to the stream (for the stats). */
  written = 0;
  /** The object's pass: the newest event this client was given (or held), when, and passes it was found writing. */
  sentSeq = 0;
  lastAt = -Infinity;
  skipped = 0;
  constructor(
    readonly interest: Interest,
    private readonly write: (chunk: Uint8Array) => Promise<void>,
    private readonly finish: (abort: boolean) => void,
    private readonly onGone: () => void,
    private readonly timers: { set: (fn: () => void, ms: number) => unknown } = { set: (fn, ms) => setTimeout(fn, ms) },
  ) {
    this.key = interestKey(interest);
  }

  wantsEvent(e: Encoded): boolean {
    return wants(this.interest, e);
  }

  /** A write is outstanding: the response has not taken it yet. */
  get writing(): boolean {
    return this.busy;
  }

  /** Events it was owed are no longer held: told `overflow` and disconnected, never skipped silently. */
  behind(): void {
    if (!this.closed) this.overflow();
  }

  /** True when nothing is outstanding or held: the client takes the shared chunk of a pass. */
  get idle(): boolean {
    return !this.busy && this.held.size === 0 && !this.closed;
  }

  /** A flush's chunk for this client's interest (shared with every idle client of the same interest). */
  send(chunk: Uint8Array): void {
    if (this.closed) return;
    this.busy = true;
    this.written += chunk.byteLength;
    this.write(chunk).then(
      () => this.drained(),
      () => this.end(true),
    );
  }

  /** A flush's events while the client is slow: held, ticks conflated. */
  hold(batch: readonly Encoded[]): void {
    if (this.closed) return;
    for (const e of batch) {
      if (!wants(this.interest, e)) continue;
      if (e.topic === 'ticks') this.held.tick(`t${e.symbol}`, e.sse);
      else this.held.other(e.sse);
    }
    if (this.held.nonTicks > maxBehind) this.overflow();
    else if (!this.busy) this.drained();
  }

  /** Text outside the platform's events (retry, comments, resync, replayed events): goes out in order. */
  raw(text: string): void {
    if (this.closed) return;
    this.held.raw(text);
    if (!this.busy) this.drained();
  }

  private drained(): void {
    this.busy = false;
    if (this.closed || this.held.size === 0) return;
    this.send(encoder.encode(this.held.take()));
  }

  private overflow(): void {
    this.closeWith('overflow', { message: `more than ${maxBehind} events behind: reconnect and resync` });
  }

  /**
   * Ends the stream with a last event saying why (`overflow`, `closed`): what is held is dropped, the event goes out
   * after any outstanding write, and a client that takes nothing more within OVERFLOW_GRACE_MS is cut off.
   */
  closeWith(event: string, data: object): void {
    if (this.closed) return;
    this.held.take();
    this.closed = true;
    this.onGone();
    let finished = false;
    const done = (abort: boolean) => {
      if (finished) return;
      finished = true;
      this.finish(abort);
    };
    const text = `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    this.write(encoder.encode(text)).then(
      () => done(false),
      () => done(true),
    );
    this.timers.set(() => done(true), OVERFLOW_GRACE_MS);
  }

  end(abort = false): void {
    if (this.closed) return;
    this.closed = true;
    this.finish(abort);
    this.onGone();
  }
}

/** What a hub socket receives (kept in its attachment, so it survives hibernation). */
export interface HubInterest {
  handshaken: boolean;
  /** SubscribeToTicks symbols. */
  ticks: string[];
  /** Open server streams by invocation id. */
  streams: Record<string, { topic: StreamTopic; symbol?: string }>;
}

/**
 * One hub socket's flow: probes (when the client asked for flow checks) or its keep-alive, held output while slow,
 * overflow. Lives in memory (a woken object starts afresh).
 */
export class HubFlow {
  private readonly held = new Held();
  private probe: { id: string; at: number } | null = null;
  /** The client asked for flow checks: it is judged by its answers, else by its keep-alive. */
  private checks = false;
  /** Without checks: when data first went out after the client was last heard from (null: heard since). */
  private owedSince: number | null = null;
  /** The object's pass: the newest event this socket was given, and when. */
  sentSeq = 0;
  lastAt = -Infinity;
  private lastProbeAt = -Infinity;
  private serial = 0;
  closed = false;
  constructor(
    private readonly send: (text: string) => void,
    private readonly close: (error: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  get slow(): boolean {
    if (this.checks) return this.probe !== null && this.now() - this.probe.at > SLOW_MS;
    return this.owedSince !== null && this.now() - this.owedSince > quietMs;
  }

  get holding(): number {
    return this.held.size;
  }

  /** The client asked for flow checks (`EnableFlowControl`): from now on it is probed and judged by its answers. */
  enableChecks(): void {
    if (this.checks) return;
    this.checks = true;
    this.owedSince = null;
    if (this.held.size > 0 && !this.closed) this.out(this.held.take());
  }

  /**
   * The client sent something (any message): a client without flow checks is alive and reading (its keep-alive ping
   * is sent only as it receives), so what was held for it goes out; a client with checks is judged by its answers.
   */
  heard(): void {
    if (this.checks) return;
    this.owedSince = null;
    if (this.held.size > 0 && !this.closed) this.out(this.held.take());
  }

  /** A flush's events for the socket with interest `s`. */
  deliver(s: HubInterest, batch: readonly Encoded[]): void {
    if (this.closed || !s.handshaken) return;
    const slow = this.slow || this.held.size > 0;
    let text = '';
    for (const e of batch) {
      if (
        e.topic === 'status' ||
        (e.topic === 'resync' && wantsResync(Object.values(s.streams).map((st) => st.topic)))
      ) {
        if (slow) this.held.other(e.hubInvocation());
        else text += e.hubInvocation();
        continue;
      }
      if (e.topic === 'resync') continue;
      if (e.topic === 'ticks' && s.ticks.includes(e.symbol as string)) {
        if (slow) this.held.tick(`t|${e.symbol}`, e.hubInvocation());
        else text += e.hubInvocation();
      }
      for (const id in s.streams) {
        const st = s.streams[id];
        if (st.topic !== e.topic) continue;
        if (e.topic === 'ticks') {
          if (st.symbol && st.symbol !== e.symbol) continue;
          if (slow) this.held.tick(`s|${id}|${e.symbol}`, e.hubItem(id));
          else text += e.hubItem(id);
        } else if (slow) {
          this.held.other(e.hubItem(id), `s|${id}|${this.serial++}`);
        } else {
          text += e.hubItem(id);
        }
      }
    }
    if (this.held.nonTicks > maxBehind) {
      this.held.take();
      this.closed = true;
      this.close(`more than ${maxBehind} events behind: reconnect and resync`);
      return;
    }
    if (text !== '') this.out(text);
  }

  /** A completion from the client: true when it answered a probe (and is consumed here). */
  answered(invocationId: string): boolean {
    if (!invocationId.startsWith('flow-')) return false;
    if (this.probe?.id === invocationId) {
      this.probe = null;
      if (this.held.size > 0 && !this.closed) this.out(this.held.take());
    }
    return true;
  }

  /** A stream the client cancelled: nothing more of it, held items included. */
  cancelled(invocationId: string): void {
    this.held.drop((key) => key.startsWith(`s|${invocationId}|`));
  }

  private out(text: string): void {
    const now = this.now();
    if (!this.checks) {
      this.owedSince ??= now;
    } else if (this.probe === null && now - this.lastProbeAt >= PROBE_MS) {
      const id = `flow-${this.serial++}`;
      this.probe = { id, at: now };
      this.lastProbeAt = now;
      text += `{"type":1,"invocationId":"${id}","target":"${PROBE_TARGET}","arguments":[]}${RS}`;
    }
    this.send(text);
  }
}
