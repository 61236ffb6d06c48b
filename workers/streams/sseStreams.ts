/**
 * A stream object's Server-Sent Events responses. A new stream is sent `retry`, then what it missed when it names a
 * `Last-Event-ID` (or `resync`: `EventRing.replay`), else the stream's status; from then on the object's passes
 * write it what comes after. Each response is a native stream without a queue, so a write completes when the response
 * has taken the bytes (fanout.ts, `SseSink`).
 */
import { SseSink, type Interest } from './fanout.js';
import { SseClient } from './clients.js';
import { STREAM_RING_SIZE, type EventRing } from './eventRing.js';
import type { StreamCaller } from './standing.js';

/** An SSE client whose write is still outstanding this many events behind is held and conflated at once (SseClient). */
const HOLD_AFTER = STREAM_RING_SIZE / 2;

/** The pipe from the object to one response: workerd's `IdentityTransformStream` (no queue). */
export type SsePipe = () => { readable: ReadableStream<Uint8Array>; writable: WritableStream<Uint8Array> };

export class SseStreams {
  private readonly open = new Set<SseClient>();

  constructor(
    private readonly ring: EventRing,
    /** A write went out (for the object's counters). */
    private readonly sent: () => void,
    private readonly pipe: SsePipe = () => new IdentityTransformStream(),
  ) {}

  get size(): number {
    return this.open.size;
  }

  /** The open streams, in the order they were opened. */
  clients(): SseClient[] {
    return [...this.open];
  }

  /** A new stream for `caller`, of what `interest` asks for. */
  start(interest: Interest, caller: StreamCaller, lastEventId: string | null): Response {
    const { readable, writable } = this.pipe();
    const writer = writable.getWriter();
    const sink = new SseSink(
      interest,
      (chunk) => {
        this.sent();
        return writer.write(chunk);
      },
      (abort) => {
        (abort ? writer.abort('overflow') : writer.close()).catch(() => {});
      },
      () => {
        this.open.delete(client);
      },
    );
    const client = new SseClient(sink, caller, HOLD_AFTER);
    sink.raw('retry: 1000\n\n');
    if (lastEventId) this.ring.replay(sink, lastEventId);
    else sink.raw(this.ring.statusText());
    // What came before is in the replay (or the status): the passes write it what comes after.
    client.sentSeq = this.ring.seq;
    this.open.add(client);
    return new Response(readable, {
      headers: {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        'x-accel-buffering': 'no',
      },
    });
  }
}
