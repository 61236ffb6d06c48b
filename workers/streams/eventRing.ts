/**
 * A stream object's events: every event of the platform's stream gets an id, `<epoch>-<seq>` (the epoch is new each
 * time the object starts, and its first two hex digits are the object's shard, so a reconnect finds the object
 * again), and the last `STREAM_RING_SIZE` events are held. An EventSource that reconnects with `Last-Event-ID` is
 * sent what it missed (`replay`); one whose id is older than the ring, or from another epoch, is sent a `resync`
 * event instead.
 *
 * The ring also keeps the stream's status: a status event is added only when it changes the status, and a status up
 * after the broker's session was down is preceded by a `resync` notice (the changes while it was away came in its new
 * snapshot, not as events).
 */
import { Encoded, type RingEvent, type SseSink } from './fanout.js';

export const STREAM_RING_SIZE = 10_000;
export const RESYNC_MESSAGE =
  'events may have been missed while the stream was interrupted: read the current state again';

export class EventRing {
  /** Event ids' prefix: the shard (two hex digits) and six random ones. */
  private epochText = '00' + newEpoch();
  private newest = 0;
  private readonly held: Encoded[] = [];
  private up = false;
  /** The status went down and no `resync` was added since: the next status up is preceded by one. */
  private owesResync = false;

  constructor(private readonly size = STREAM_RING_SIZE) {}

  get epoch(): string {
    return this.epochText;
  }
  /** The newest event's number (0: none yet). */
  get seq(): number {
    return this.newest;
  }
  /** The status the stream's clients were last told. */
  get connected(): boolean {
    return this.up;
  }

  /** The object's shard, in its epoch; only before the first event, so ids already sent keep naming this epoch. */
  setShard(shard: number): void {
    if (this.newest === 0) this.epochText = shard.toString(16).padStart(2, '0') + this.epochText.slice(2);
  }

  /** Adds an event (a status only when it changes the status); answers whether anything was added. */
  publish(event: RingEvent): boolean {
    if (event.topic === 'status') {
      // A broker's session down is owed a resync when it comes up, even when the clients were told down already (a
      // new subscription on a broker whose session is still logging in).
      if (!event.data.connected) this.owesResync = true;
      if (event.data.connected === this.up) return false;
      this.up = event.data.connected;
      if (this.up && this.owesResync) {
        // Down, then up again on the same subscription: the broker's manager session dropped and logged in again. The
        // clients are told so before the status, as after a move to another broker.
        this.publish({ topic: 'resync', data: { message: RESYNC_MESSAGE } });
      }
    } else if (event.topic === 'resync') {
      this.owesResync = false;
    }
    const seq = ++this.newest;
    this.held.push(new Encoded(seq, `${this.epochText}-${seq}`, event));
    if (this.held.length > this.size) this.held.shift();
    return true;
  }

  /** The events after number `sent`, up to the newest; null when some of them are no longer held. */
  after(sent: number): Encoded[] | null {
    const at = sent + 1 - (this.held[0]?.seq ?? this.newest + 1);
    return at < 0 ? null : this.held.slice(at);
  }

  /** The SSE event that opens a new stream: the status, with the id a reconnect names. */
  statusText(): string {
    return `id: ${this.epochText}-${this.newest}\nevent: status\ndata: ${JSON.stringify({ connected: this.up })}\n\n`;
  }

  /** Sends what a reconnecting client missed, or `resync` when it is no longer held. */
  replay(client: SseSink, lastEventId: string): void {
    const m = /^([0-9a-f]{8})-(\d+)$/.exec(lastEventId.trim());
    const oldest = this.held[0]?.seq ?? this.newest + 1;
    if (!m || m[1] !== this.epochText || Number(m[2]) > this.newest || Number(m[2]) < oldest - 1) {
      client.raw(
        `id: ${this.epochText}-${this.newest}\nevent: resync\ndata: ${JSON.stringify({ message: 'the missed events are no longer held: read the current state again', connected: this.up })}\n\n`,
      );
      return;
    }
    const after = Number(m[2]);
    let text = '';
    for (const held of this.held) if (held.seq > after && client.wantsEvent(held)) text += held.sse;
    if (text) client.raw(text);
  }

  /**
   * Nobody listens any more, so nobody is owed a resync for what the next subscription's status follows. After a gap
   * (`gap`: a subscription was lost or left) events go unseen from now on: the held ones are let go and a new epoch
   * begins, so a client back with an id from before is told to resync, and a new client, which reads the state as it
   * connects, is owed none.
   */
  idle(gap: boolean): void {
    this.owesResync = false;
    if (gap) {
      this.held.length = 0;
      this.epochText = this.epochText.slice(0, 2) + newEpoch();
    }
  }
}

function newEpoch(): string {
  return crypto.randomUUID().slice(0, 6);
}
