/**
 * Live streams: the topics a subscription names and the events it carries, the same on the edge ↔ broker link
 * (`frames.ts`: `#subscribe` / `#unsubscribe` and `{sub, event}` frames) and towards clients (Server-Sent Events and the
 * SignalR hubs). Payloads are built by the broker from the platform's change stream, field by field from a fixed list,
 * so a field the trading server adds (a secret among them) never reaches a client.
 */
import type { Family } from './protocol.js';

export const PF4_TOPICS = ['ticks', 'trades', 'users', 'symbols', 'margin'] as const;
export const PF5_TOPICS = ['ticks', 'positions', 'orders', 'deals', 'users', 'margin'] as const;
/** Every topic, plus `status` (the platform's manager session up or down), which every subscription gets. */
export type StreamTopic = (typeof PF4_TOPICS)[number] | (typeof PF5_TOPICS)[number] | 'status';

export function topicsOf(family: Family): readonly StreamTopic[] {
  return family === 'PF4' ? PF4_TOPICS : PF5_TOPICS;
}

/** How a record changed: SignalR clients of this kind of gateway read `Added`, `Updated` and `Deleted`. */
export type ChangeKind = 'Added' | 'Updated' | 'Deleted';

export interface TickPayload {
  symbol: string;
  bid: number;
  ask: number;
  lastTime: string;
}
export interface StatusPayload {
  connected: boolean;
}

/** One event of a platform's stream. `data` is a tick, a status, or a record change with its `kind`. */
export type StreamEvent =
  | { topic: 'ticks'; data: TickPayload }
  | { topic: 'status'; data: StatusPayload }
  | { topic: Exclude<StreamTopic, 'ticks' | 'status'>; data: Record<string, unknown> };
