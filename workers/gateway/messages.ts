/**
 * Everything that crosses the edge ↔ gateway object boundary (Durable Object RPC: the edge to a link object or an
 * idempotency ledger, a ledger to a link object and back), typed in one place.
 */
import type { ShapedBytes, ShapedResponse } from '../envelope/index.js';
import type { CallResult, OutcomeReport } from '../../shared/frames.js';
import type { FailoverReason } from '../../shared/frames.js';
import type { Family } from '../../shared/protocol.js';
import type { ReplicaStats } from './edgeReplica.js';
import type { Placement } from '../regions/placement.js';

/** One operation call, already validated by the edge; a link object forwards it on its broker link. */
export interface GatewayCall {
  /** Catalog entry id: the object shapes the answer itself so that it can store and replay it as sent. */
  operationId: string;
  /** Broker handler name (`entry.op`). */
  op: string;
  /** Trade platform uuid. */
  platform: string;
  /** The platform's family, naming manager codes (Registry Ping has no family of its own). */
  family: Family | null;
  args: Record<string, unknown>;
  timeoutMs: number;
  traceId: string;
  /** The calling API client's id: the broker shares each platform's manager session fairly between clients (`CallFrame.client`). */
  client?: string;
  /**
   * Base URLs (http/https) of the brokers that serve the platform, in the order they take its calls (the registry's
   * list, else the edge's `BROKER_URL`); each link is `<url>/link`.
   */
  brokerUrls: string[];
  mutating: boolean;
  /** Where the platform's home objects are (docs/regions.md): its live reads, writes and keyed calls' ledgers. */
  home: Placement;
  /** Where the link object the edge sends the call to is: `home`, or the caller's region for a cached read. */
  place: Placement;
  /**
   * A cached read's `X-Gateway-Position` (checked): answered only from a replica that has reached it (waiting within
   * the budget), else by the broker.
   */
  after?: string;
  /** v2 mutating calls with an `Idempotency-Key`. */
  idempotency?: IdempotencyInput;
}

export interface IdempotencyInput {
  /** Scoped key: `<clientId>:<Idempotency-Key>`, so two clients of one organization never share an answer. */
  key: string;
  /** Name of the ledger object that owns the key (`ledgerName`), so link objects can hand it late outcomes. */
  ledger: string;
  /** SHA-256 (hex) of method, path, canonical query and canonical body. */
  requestHash: string;
  /** Hours a stored answer is replayed for. */
  retentionHours: number;
  /**
   * The caller's organization, whose audit trail the ledger completes when a follow-up learns the outcome of a call
   * answered `unknown` (workers/audit/); absent from calls of an edge without a trail.
   */
  organization?: string;
}

export type GatewayResponse = ShapedResponse;

/** What a link object answers a call with: a large success as bytes, passed on as they are (`successBytes`). */
export type LinkResponse = GatewayResponse | ShapedBytes;

/** A call under an Idempotency-Key as a ledger hands it to a link object: answered raw, so the ledger can judge it. */
export interface KeyedSend {
  platform: string;
  op: string;
  args: Record<string, unknown>;
  timeoutMs: number;
  traceId: string;
  /** The calling API client's id (`GatewayCall.client`). */
  client?: string;
  brokerUrls: string[];
  /** The binding's call id (the broker runs it at most once). */
  callId: string;
  /** The ledger to hand the call's late outcome to. */
  ledger: string;
  /** Where the ledger and the link object it sends to are: the platform's home. */
  home: Placement;
}

/** What a link object can tell about a call id: the broker's report, or that the broker cannot be asked now. */
export type OutcomeAnswer = OutcomeReport | { state: 'unreachable'; message: string };

/** A broker answer without its frame id, as a link object returns it raw. */
export type LinkAnswer = CallResult;

/** Per-object counters of a link object, for operators and tests. */
export interface LinkStats {
  /** Calls forwarded since the object started (keyed sends and outcome queries included). */
  calls: number;
  /** Calls waiting for their answer now. */
  pending: number;
  /** Whether the object holds an open link to the broker. */
  connected: boolean;
  /** Keyed calls whose late outcome this object still waits to hand to their ledger. */
  lateRoutes: number;
  /** Calls this region's object sent to the home region's links because it could not reach the brokers. */
  viaHome: number;
  /** Reads that waited for the replica to reach the position they sent (`X-Gateway-Position`). */
  positionWaits: number;
  /** The replica of the platform's hot tables, or null when the object has none (yet, or `EDGE_REPLICA_MAX_ROWS=0`). */
  replica: ReplicaStats | null;
}

/** Per-object figures of an idempotency ledger, for operators and the retention test. */
export interface LedgerStats {
  records: number;
  inflight: number;
  unknown: number;
  /** UTF-8 bytes of the answers its keys store for replay (bounded by IDEMPOTENCY_LEDGER_MAX_MB). */
  storedBytes: number;
  /** When the retention/follow-up alarm fires next (ms since the epoch), or null when none is set. */
  nextAlarm: number | null;
  /** Asked with a key: that key's state (`inflight`, `done`, `unknown`), or null when the ledger holds none. */
  keyState?: string | null;
}

/** A broker as a link object last saw it: taking calls, left (lost, hung, unreachable), or draining. */
export type BrokerHealth = 'ok' | 'down' | 'draining';

/** A link object's view of the brokers of its platform (`BrokerSet`), for operators, the failover drill and tests. */
export interface BrokerSetStats {
  /** The broker calls go to now. */
  current: string;
  /** Each broker's health as the set last saw it, in list order. */
  brokers: Array<{ url: string; health: BrokerHealth; connected: boolean }>;
  /** Moves to another broker, by reason. */
  failovers: Partial<Record<FailoverReason, number>>;
  /** Calls sent again to another broker after the first could not take them or was lost under them. */
  moved: number;
  /** When calls last went to another broker (ms since the epoch, the object's clock), or null before any move. */
  lastMoveAt: number | null;
}

export const REPLAYED_HEADER = 'Idempotency-Replayed';
