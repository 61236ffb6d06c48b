/**
 * A stream object's clients behind one interface (`StreamClient`), so its pass over them, its re-check of their
 * standing and its keep-alive treat every client alike. Two implementations:
 *
 * - `SseClient`: a Server-Sent Events response, written through its `SseSink` (fanout.ts). It has at most one write
 *   outstanding: a pass that finds it still writing leaves it for a later pass, and one that finds it so twice running,
 *   or lacking more than `holdAfter` events, has it hold what it lacks (ticks conflated). Clients of one interest
 *   lacking the same events share one encoded chunk per turn of a pass (`SharedChunks`).
 * - `HubClient`: a SignalR hub WebSocket accepted with the Hibernation API: its interest and caller (`HubState`), and
 *   its `HubFlow` (fanout.ts), which learns whether it is slow from the client, since a socket's sends tell nothing:
 *   from its answers to flow checks if it asked for them (`EnableFlowControl`), else from its keep-alive. A socket is
 *   owed nothing before its handshake.
 *
 * Invariants: a client's `sentSeq` is the newest event it was given or holds, and only grows; a closed client is
 * given nothing more; a client owed events the object no longer holds is told so and disconnected, never skipped
 * silently (`behind`); a client whose standing ends is told why in its own form (`end`): a last SSE `closed` event,
 * or a hub Close message.
 */
import type { Family } from '../../shared/protocol.js';
import { chunkFor, HubFlow, type Encoded, type HubInterest, type SseSink } from './fanout.js';
import * as hub from './signalr.js';
import type { StreamCaller, StreamEnd } from './standing.js';

/** One client of a stream object, as its passes, re-checks and keep-alive see it. */
export interface StreamClient {
  /** Who opened the stream, as its token said when it connected (re-checked while it is open: standing.ts). */
  readonly caller: StreamCaller;
  /** The newest event the client was given (or holds), and when it was last written to (epoch ms). */
  sentSeq: number;
  lastAt: number;
  /** Ended or ending: it is given nothing more. */
  readonly closed: boolean;
  /** False while it is owed nothing (a hub socket before its handshake). */
  readonly ready: boolean;
  /**
   * True while it is still taking an earlier write: the pass comes back to it later. A client found so may take
   * `range` (the events after its `sentSeq`, up to `seq`) into what it holds, and then owes it nothing more.
   */
  stillWriting(range: readonly Encoded[], seq: number): boolean;
  /** Gives it `range`, what it lacks, in one write or message. */
  deliver(range: readonly Encoded[], chunks: SharedChunks): void;
  /** It is owed events the object no longer holds: told so and disconnected. */
  behind(): void;
  /** Its stream ends for `reason`, which it is told. */
  end(reason: StreamEnd): void;
  /** The keep-alive. */
  ping(): void;
}

/** Of one turn of a pass: SSE clients of one interest lacking the same events share one encoded chunk. */
export class SharedChunks {
  private readonly chunks = new Map<string, Uint8Array | null>();

  /** The chunk of `range` for the sink's interest (null: it wants none of it). */
  of(sink: SseSink, range: readonly Encoded[]): Uint8Array | null {
    const key = `${sink.key}|${range[0].seq}`;
    let chunk = this.chunks.get(key);
    if (chunk === undefined) {
      chunk = chunkFor(sink.interest, range);
      this.chunks.set(key, chunk);
    }
    return chunk;
  }
}

/** A Server-Sent Events client. */
export class SseClient implements StreamClient {
  constructor(
    readonly sink: SseSink,
    readonly caller: StreamCaller,
    /** Events behind past which a client found still writing holds what it lacks at once. */
    private readonly holdAfter: number,
  ) {}

  get sentSeq(): number {
    return this.sink.sentSeq;
  }
  set sentSeq(seq: number) {
    this.sink.sentSeq = seq;
  }
  get lastAt(): number {
    return this.sink.lastAt;
  }
  set lastAt(at: number) {
    this.sink.lastAt = at;
  }
  get closed(): boolean {
    return this.sink.closed;
  }
  get ready(): boolean {
    return true;
  }

  stillWriting(range: readonly Encoded[], seq: number): boolean {
    const sink = this.sink;
    if (!sink.writing) return false;
    // Found so twice running (or far behind), it is slow: what it lacks is held, ticks conflated, and past
    // MAX_BEHIND it is told overflow (SseSink.hold).
    sink.skipped++;
    if (sink.skipped >= 2 || seq - sink.sentSeq > this.holdAfter) {
      sink.hold(range);
      sink.sentSeq = seq;
    }
    return true;
  }

  deliver(range: readonly Encoded[], chunks: SharedChunks): void {
    const sink = this.sink;
    if (!sink.idle || sink.skipped >= 2) {
      // Held output waiting, or slow two passes running: its own text, ticks conflated.
      sink.skipped = 0;
      sink.hold(range);
      return;
    }
    sink.skipped = 0;
    const chunk = chunks.of(sink, range);
    if (chunk) sink.send(chunk);
  }

  behind(): void {
    this.sink.behind();
  }

  end(reason: StreamEnd): void {
    this.sink.closeWith('closed', { code: reason.code, message: reason.message });
  }

  ping(): void {
    this.sink.raw(': ping\n\n');
  }
}

/**
 * A hub client's state. Its family, handshake and caller are kept in the socket's attachment too (a few hundred bytes);
 * its subscriptions, bounded by MAX_HUB_TICK_SYMBOLS and MAX_HUB_STREAMS (hubMessages.ts), live in memory only, since an
 * attachment holds at most 2 KiB. The object does not hibernate while it has clients: its ping and re-check timers
 * and its broker socket keep it in memory.
 */
export interface HubState extends HubInterest {
  family: Family;
  caller: StreamCaller;
}

/** A socket's state as its attachment left it (an object that lost its memory finds its sockets again). */
export function savedHubState(ws: WebSocket): HubState {
  const saved = ws.deserializeAttachment() as Partial<HubState> | null;
  return {
    family: saved?.family ?? 'PF4',
    handshaken: saved?.handshaken ?? false,
    ticks: [],
    streams: {},
    // A socket without a saved caller (accepted before callers were kept) ends at the next check.
    caller: saved?.caller ?? { clientId: '', organizationId: '', expiresAt: 0 },
  };
}

/** What a hub client needs of its stream object. */
export interface HubHost {
  /** The object's newest event: a flow made now is owed what comes after it. */
  seq(): number;
  /** A message went out (for the object's counters). */
  sent(): void;
  /** The object lets go of the socket: it is handled no more. */
  forget(ws: WebSocket): void;
}

/** A SignalR hub socket. */
export class HubClient implements StreamClient {
  private made: HubFlow | undefined;
  /** Let go by the object (closed, ended or refused): given nothing more. */
  forgotten = false;

  constructor(
    readonly ws: WebSocket,
    readonly state: HubState,
    private readonly host: HubHost,
  ) {}

  get caller(): StreamCaller {
    return this.state.caller;
  }

  /** The socket's flow, made when first needed: from then on the socket is owed every event. */
  flow(): HubFlow {
    if (!this.made) {
      this.made = new HubFlow(
        (text) => this.send(text),
        (error) => {
          // The closed flow stays until the socket's close arrives, so it is sent nothing more meanwhile.
          this.send(hub.close(error, true));
          try {
            this.ws.close(1008, 'too far behind');
          } catch {
            /* gone */
          }
        },
      );
      this.made.sentSeq = this.host.seq();
    }
    return this.made;
  }

  /** Whether its flow was made, and whether that flow finds it slow (for the object's counters). */
  get flowing(): boolean {
    return this.made !== undefined;
  }
  get slow(): boolean {
    return this.made?.slow ?? false;
  }

  get sentSeq(): number {
    return this.flow().sentSeq;
  }
  set sentSeq(seq: number) {
    this.flow().sentSeq = seq;
  }
  get lastAt(): number {
    return this.flow().lastAt;
  }
  set lastAt(at: number) {
    this.flow().lastAt = at;
  }
  get closed(): boolean {
    return this.forgotten || this.flow().closed;
  }
  get ready(): boolean {
    return this.state.handshaken;
  }

  /** Its sends complete at once (workerd queues them): its flow learns whether it is slow from the client instead. */
  stillWriting(): boolean {
    return false;
  }

  deliver(range: readonly Encoded[]): void {
    this.flow().deliver(this.state, range);
  }

  behind(): void {
    this.flow().closed = true;
    this.send(hub.close('too far behind: reconnect and resync', true));
    try {
      this.ws.close(1008, 'too far behind');
    } catch {
      /* gone */
    }
  }

  /** A Close message saying why (allowing a reconnect when only the token expired), and the socket is let go. */
  end(reason: StreamEnd): void {
    this.flow().closed = true;
    this.send(hub.close(`${reason.code}: ${reason.message}`, reason.reconnect));
    try {
      this.ws.close(1008, reason.code);
    } catch {
      /* gone */
    }
    this.host.forget(this.ws);
  }

  ping(): void {
    if (this.state.handshaken) this.send(hub.PING);
  }

  send(text: string): void {
    try {
      this.ws.send(text);
      this.host.sent();
    } catch {
      /* closing */
    }
  }

  /** The attachment: what identifies the socket, never its subscriptions (see HubState). */
  save(): void {
    const s = this.state;
    this.ws.serializeAttachment({ family: s.family, handshaken: s.handshaken, caller: s.caller });
  }
}
