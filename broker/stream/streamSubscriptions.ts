/**
 * The stream subscriptions of one edge link (`#subscribe` / `#unsubscribe`, `shared/frames.ts`). A subscription
 * listens to one platform's events (`PlatformEvents`), keeps those of its topics and pushes each as a `{sub, event}`
 * frame on the link (or, for a subscriber that asked for batches, the events of one turn as one `{sub, events}`
 * frame, sent once the turn's I/O is done). When the link is congested (more than `congestedBytes` waiting in its
 * socket), ticks are held back and conflated per symbol, the latest price winning, and go out once the socket
 * drained; every other event is always sent, in order. Closing the link ends every subscription it carries. A
 * subscription holds its platform in use while open (`use`), so a cold standby logs in for it and stays logged in.
 */
import type { CallFrame, StreamBatchFrame, StreamFrame, StreamSnapshotFrame } from '../../shared/frames.js';
import { MAX_STREAM_BATCH, SUBSCRIBE_OP, UNSUBSCRIBE_OP } from '../../shared/frames.js';
import type { Family } from '../../shared/protocol.js';
import type { StreamEvent, StreamTopic, TickPayload } from '../../shared/streams.js';
import { topicsOf } from '../../shared/streams.js';
import type { PlatformEvents } from './platformEvents.js';
import { stringifyJson } from '../../shared/losslessJson.js';

/** What the subscriptions need of a link: its socket's backlog and a way to send. */
export interface StreamSink {
  send(text: string): void;
  /** Bytes queued in the socket and not yet sent. */
  readonly bufferedAmount: number;
}

export const DEFAULT_CONGESTED_BYTES = 4 * 1024 * 1024;
/** How often held ticks are retried while the link is congested. */
const DRAIN_CHECK_MS = 20;

interface Subscription {
  stop(): void;
}

export function isStreamOp(op: string): boolean {
  return op === SUBSCRIBE_OP || op === UNSUBSCRIBE_OP;
}

export class StreamSubscriptions {
  private readonly subs = new Map<number, Subscription>();

  constructor(
    private readonly sink: StreamSink,
    private readonly eventsOf: (platform: string) =>
      | {
          family: Family;
          events: PlatformEvents;
          use?: () => { release(): void };
          snapshot?: (topics: readonly StreamTopic[]) => StreamEvent[];
        }
      | undefined,
    private readonly congestedBytes = DEFAULT_CONGESTED_BYTES,
  ) {}

  get count(): number {
    return this.subs.size;
  }

  /** Answers a `#subscribe` or `#unsubscribe` frame. */
  handle(frame: CallFrame): void {
    const answer = (body: Record<string, unknown>) => this.sink.send(JSON.stringify({ id: frame.id, ...body }));
    const fail = (code: string, message: string) => answer({ ok: false, error: { code, managerCode: null, message } });
    if (frame.op === UNSUBSCRIBE_OP) {
      const sub = Number((frame.args as { sub?: unknown }).sub);
      const found = this.subs.get(sub);
      found?.stop();
      this.subs.delete(sub);
      answer({ ok: true, data: found !== undefined });
      return;
    }
    const platform = this.eventsOf(frame.platform);
    if (!platform) return fail('NotFound', 'trade platform not served by this broker');
    const { topics: asked, batch, snapshot } = frame.args as { topics?: unknown; batch?: unknown; snapshot?: unknown };
    const served = topicsOf(platform.family);
    if (
      !Array.isArray(asked) ||
      asked.some((t) => typeof t !== 'string' || !(served as readonly string[]).includes(t))
    ) {
      return fail('Validation', `topics: must be a list of ${served.join(', ')}`);
    }
    if (batch !== undefined && typeof batch !== 'boolean') return fail('Validation', 'batch: must be true or false');
    if (snapshot !== undefined && typeof snapshot !== 'boolean')
      return fail('Validation', 'snapshot: must be true or false');
    if (snapshot === true && !platform.snapshot) return fail('Validation', 'snapshot: not served by this broker');
    if (this.subs.has(frame.id)) return fail('Validation', `subscription ${frame.id} exists on this link`);
    answer({ ok: true, data: { sub: frame.id } });
    const lease = platform.use?.();
    const topics = asked as StreamTopic[];
    const records = snapshot === true && platform.snapshot ? () => platform.snapshot!(topics) : undefined;
    const sub = this.start(frame.id, platform.events, new Set(topics), batch === true, records);
    this.subs.set(
      frame.id,
      lease
        ? {
            stop: () => {
              sub.stop();
              lease.release();
            },
          }
        : sub,
    );
  }

  close(): void {
    for (const sub of this.subs.values()) sub.stop();
    this.subs.clear();
  }

  private start(
    sub: number,
    events: PlatformEvents,
    topics: Set<StreamTopic>,
    batched: boolean,
    records?: () => StreamEvent[],
  ): Subscription {
    const heldTicks = new Map<string, TickPayload>();
    let timer: ReturnType<typeof setTimeout> | undefined;
    // Batched: the turn's events gather here and leave together once the turn's I/O callbacks are done.
    let pending: StreamEvent[] = [];
    let sending: ReturnType<typeof setImmediate> | undefined;
    const sendPending = () => {
      if (sending) clearImmediate(sending);
      sending = undefined;
      if (pending.length === 0) return;
      const batch = pending;
      pending = [];
      this.sink.send(stringifyJson({ sub, events: batch } satisfies StreamBatchFrame));
    };
    const push = batched
      ? (event: StreamEvent) => {
          pending.push(event);
          if (pending.length >= MAX_STREAM_BATCH) sendPending();
          else sending ??= setImmediate(sendPending);
        }
      : (event: StreamEvent) => this.sink.send(stringifyJson({ sub, event } satisfies StreamFrame));
    const congested = () => this.sink.bufferedAmount > this.congestedBytes;
    const drain = () => {
      timer = undefined;
      if (congested()) {
        timer = setTimeout(drain, DRAIN_CHECK_MS);
        return;
      }
      for (const data of heldTicks.values()) push({ topic: 'ticks', data });
      heldTicks.clear();
    };
    // The records as they stand once the stream is whole, after any event already waiting: the changes that follow
    // it are the changes after it.
    const sendSnapshot = () => {
      if (!records) return;
      sendPending();
      const all = records();
      for (let at = 0; at === 0 || at < all.length; at += MAX_STREAM_BATCH) {
        const part: StreamSnapshotFrame = {
          sub,
          snapshot: { events: all.slice(at, at + MAX_STREAM_BATCH), last: at + MAX_STREAM_BATCH >= all.length },
        };
        this.sink.send(stringifyJson(part));
      }
    };
    push({ topic: 'status', data: { connected: events.connected } });
    if (events.connected) sendSnapshot();
    const stop = events.listen((event) => {
      if (event.topic !== 'status' && !topics.has(event.topic)) return;
      if (event.topic === 'status') {
        push(event);
        if (event.data.connected) sendSnapshot();
        return;
      }
      if (event.topic === 'ticks' && (heldTicks.size > 0 || congested())) {
        heldTicks.delete(event.data.symbol); // re-inserted last: symbols go out in the order of their latest tick
        heldTicks.set(event.data.symbol, event.data);
        timer ??= setTimeout(drain, DRAIN_CHECK_MS);
        return;
      }
      push(event);
    });
    return {
      stop: () => {
        stop();
        if (timer) clearTimeout(timer);
        if (sending) clearImmediate(sending);
      },
    };
  }
}
