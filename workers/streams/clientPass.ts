/**
 * A stream object's passes over its clients. Clients are not written to event by event: each turn of a pass gives up
 * to SLICE clients, in order, what they lack, in one write or message (SSE clients of one interest lacking the same
 * events share one encoded chunk: `SharedChunks`). Then the object yields and the next turn goes on where this one
 * stopped, so an event read meanwhile reaches the clients not yet written to in this pass, rather than waiting for
 * all of them. A client is written to at most every `STREAM_FLUSH_MS`, so a busy platform's events gather per client;
 * a pass that left a client lacking events is followed by another when that client is due.
 */
import type { Encoded } from './fanout.js';
import { SharedChunks, type StreamClient } from './clients.js';
import type { EventRing } from './eventRing.js';

/** Clients written to in one turn of a pass; then the object yields, so the broker's frames are read in between. */
export const SLICE = 64;

/** What a pass needs of its stream object. */
export interface PassHost {
  /** Every client, in the order a pass goes over them. */
  clients(): StreamClient[];
  /** STREAM_FLUSH_MS: the least time between two writes to one client. */
  flushMs(): number;
}

export class ClientPass {
  /** The pass's next turn, its clients in order, and where it is. */
  private timer: ReturnType<typeof setTimeout> | undefined;
  private roster: StreamClient[] = [];
  private cursor = 0;
  /** Of the pass so far: the soonest a client that still lacks events may be written to again. */
  private due = Infinity;
  /** When the next turn runs, and the newest event when the pass began. */
  private at = 0;
  private startSeq = 0;

  constructor(
    private readonly ring: EventRing,
    private readonly host: PassHost,
  ) {}

  /**
   * An event was added. Not written at once: the rest of the frame's burst goes with it. A pass waiting for a client to
   * be due is brought forward, since a client that was not written to lately may take this event now.
   */
  wake(): void {
    if (this.timer === undefined || (this.cursor === 0 && this.at > Date.now())) this.schedule(0);
  }

  private schedule(wait: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.at = Date.now() + wait;
    this.timer = setTimeout(() => this.turn(), wait);
  }

  /** One turn of the pass. */
  private turn(): void {
    this.timer = undefined;
    const now = Date.now();
    const interval = this.host.flushMs();
    if (this.cursor === 0) {
      this.roster = this.host.clients();
      this.due = Infinity;
      this.startSeq = this.ring.seq;
    }
    const seq = this.ring.seq;
    const ranges = new Map<number, Encoded[] | null>();
    const rangeAfter = (sent: number): Encoded[] | null => {
      let range = ranges.get(sent);
      if (range === undefined) {
        range = this.ring.after(sent);
        ranges.set(sent, range);
      }
      return range;
    };
    const chunks = new SharedChunks();
    const end = Math.min(this.roster.length, this.cursor + SLICE);
    for (; this.cursor < end; this.cursor++) {
      const client = this.roster[this.cursor];
      if (client.closed || client.sentSeq >= seq) continue;
      if (!client.ready) {
        client.sentSeq = seq; // owed nothing before it is ready (a hub socket's handshake)
        continue;
      }
      const range = rangeAfter(client.sentSeq);
      if (!range) {
        // Owed events that left the ring (a client not reached for the ring's span): never skipped silently.
        client.behind();
        continue;
      }
      if (client.stillWriting(range, seq)) {
        // Still taking its last write: written later (a slow SSE client holds what it lacks: SseClient).
        this.due = Math.min(this.due, now + interval);
        continue;
      }
      if (now - client.lastAt < interval) {
        this.due = Math.min(this.due, client.lastAt + interval);
        continue;
      }
      client.sentSeq = seq;
      client.lastAt = now;
      client.deliver(range, chunks);
    }
    if (this.cursor < this.roster.length) {
      this.schedule(0);
      return;
    }
    this.cursor = 0;
    this.roster = [];
    // A client lacks events (it was not due, or they came after its turn): another pass, when the first is due, and
    // for events that came during this pass an interval after it ended. That rest keeps the thread from spending all
    // its time on passes under load (docs/streams.md, "Fan-out and flow control").
    if (this.ring.seq > this.startSeq) this.due = Math.min(this.due, now + interval);
    if (this.due !== Infinity) this.schedule(Math.max(0, this.due - Date.now()));
  }
}
