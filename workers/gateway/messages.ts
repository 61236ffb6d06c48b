/**
 * Everything that crosses the edge ↔ platform gateway boundary (Durable Object RPC) and what the object stores, typed
 * in one place.
 */
import type { ShapedResponse } from '../envelope/index.js';

/** One operation call, already validated by the edge; the object forwards it on its broker link. */
export interface GatewayCall {
  /** Catalog entry id: the object shapes the answer itself so that it can store and replay it as sent. */
  operationId: string;
  /** Broker handler name (`entry.op`). */
  op: string;
  /** Trade platform uuid. */
  platform: string;
  /** The platform's family, naming manager codes (Registry Ping has no family of its own). */
  family: 'PF4' | 'PF5' | null;
  args: Record<string, unknown>;
  timeoutMs: number;
  traceId: string;
  /** Base URL of the broker that serves the platform (http/https); the link is `<brokerUrl>/link`. */
  brokerUrl: string;
  mutating: boolean;
  /** v2 mutating calls with an `Idempotency-Key`. */
  idempotency?: IdempotencyInput;
}

export interface IdempotencyInput {
  /** Scoped key: `<clientId>:<Idempotency-Key>`, so two clients of one organization never share an answer. */
  key: string;
  /** SHA-256 (hex) of method, path, canonical query and canonical body. */
  requestHash: string;
  /** Hours a stored answer is replayed for. */
  retentionHours: number;
}

export type GatewayResponse = ShapedResponse;

/** A stored first answer to an idempotent call. */
export interface StoredResponse {
  requestHash: string;
  response: GatewayResponse;
  created: number;
  expires: number;
}

export const REPLAYED_HEADER = 'Idempotency-Replayed';
