/**
 * What the edge route (routes.ts) tells a platform's stream object about the platform and the caller: internal
 * headers, set by the route and never taken from a client, read back here. The object stores the platform's part
 * (`StreamConfig`) so that it finds it again after a wake from hibernation.
 */
import type { Family } from '../../shared/protocol.js';
import type { StreamTopic } from '../../shared/streams.js';
import type { Interest } from './fanout.js';
import type { StreamCaller } from './standing.js';

export const STREAM_HEADERS = {
  platform: 'x-stream-platform',
  family: 'x-stream-family',
  broker: 'x-stream-broker',
  topics: 'x-stream-topics',
  symbols: 'x-stream-symbols',
  kind: 'x-stream-kind',
  shard: 'x-stream-shard',
  client: 'x-stream-client',
  organization: 'x-stream-organization',
  expires: 'x-stream-expires',
  address: 'x-stream-address',
} as const;

/** The platform as the route described it; `brokerUrls` in order, the first preferred. */
export interface StreamConfig {
  platform: string;
  family: Family;
  brokerUrls: string[];
  shard: number;
  /** The topics to subscribe to; absent: every topic of the family (a webhook source leaves ticks and symbols out). */
  topics?: readonly StreamTopic[];
}

/** One request to the object: the platform, who connected, and whether it is a hub socket or an SSE stream. */
export interface StreamRequest {
  config: StreamConfig;
  caller: StreamCaller;
  hub: boolean;
}

export function readStreamRequest(h: Headers): StreamRequest {
  const family = h.get(STREAM_HEADERS.family) as Family;
  const shard = Math.max(0, Math.min(255, Number(h.get(STREAM_HEADERS.shard) ?? 0) || 0));
  const brokerUrls = (h.get(STREAM_HEADERS.broker) ?? '')
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean);
  const config: StreamConfig = { platform: h.get(STREAM_HEADERS.platform) ?? '', family, brokerUrls, shard };
  const caller: StreamCaller = {
    clientId: h.get(STREAM_HEADERS.client) ?? '',
    organizationId: h.get(STREAM_HEADERS.organization) ?? '',
    expiresAt: Number(h.get(STREAM_HEADERS.expires) ?? 0) || 0,
    address: h.get(STREAM_HEADERS.address) || null,
  };
  return { config, caller, hub: h.get(STREAM_HEADERS.kind) === 'hub' };
}

/** What an SSE stream asked for: its topics, and its tick symbols (null: every symbol). */
export function sseInterest(h: Headers): Interest {
  const topics = new Set((h.get(STREAM_HEADERS.topics) ?? '').split(',').filter(Boolean) as StreamTopic[]);
  const symbolsHeader = h.get(STREAM_HEADERS.symbols);
  return { topics, symbols: symbolsHeader ? new Set(symbolsHeader.split(',')) : null };
}

/** A config as stored; one stored before platforms had lists names its one broker. */
export type StoredConfig = Omit<StreamConfig, 'brokerUrls'> & { brokerUrls?: string[]; brokerUrl?: string };

export function restoredConfig(stored: StoredConfig): StreamConfig {
  const { brokerUrl, ...rest } = stored;
  return { ...rest, brokerUrls: stored.brokerUrls ?? (brokerUrl ? [brokerUrl] : []) };
}
