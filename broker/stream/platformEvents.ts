/**
 * A platform's live stream on the broker: its change events shaped for clients (`streamShape.ts`) and its manager
 * session's state, handed to every listener (the edge subscriptions of `streamSubscriptions.ts`). The session counts as
 * connected from the end of a resync (the cache, and so every stream, is whole again) until the connection drops.
 */
import type { Family, ManagerEvent } from '../../shared/protocol.js';
import type { StreamEvent } from '../../shared/streams.js';
import { streamEvent } from './streamShape.js';
import { ListenerSet } from '../../shared/listenerSet.js';

export type StreamListener = (event: StreamEvent) => void;

export class PlatformEvents {
  private readonly listeners = new ListenerSet<StreamListener>();
  private up = false;

  constructor(private readonly family: Family) {}

  get connected(): boolean {
    return this.up;
  }

  /** Adds a listener; returns the function that removes it. */
  listen(listener: StreamListener): () => void {
    return this.listeners.listen(listener);
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  /** One event from the manager session, after the cache applied it. */
  onManagerEvent(event: ManagerEvent): void {
    if (event.event === 'resync') {
      if (event.op === 'end') this.setUp(true);
      return;
    }
    if (this.listeners.size === 0) return;
    const shaped = streamEvent(this.family, event);
    if (shaped) this.emit(shaped);
  }

  onSessionDown(): void {
    this.setUp(false);
  }

  private setUp(up: boolean): void {
    if (this.up === up) return;
    this.up = up;
    this.emit({ topic: 'status', data: { connected: up } });
  }

  private emit(event: StreamEvent): void {
    this.listeners.each((listener) => listener(event));
  }
}
