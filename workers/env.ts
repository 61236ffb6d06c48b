/**
 * The edge worker's bindings, variables and per-request context: one definition every module types against.
 *
 * The variables are the strings the runtime binds. Code reads them through workers/config.ts (`configOf(env)`), which
 * parses them once per bindings object by the rules of shared/environment.ts, where each one's default is written
 * (the defaults named below are those); a test holds this list and that schema to the same names.
 */
import type { IdempotencyLedger } from './gateway/idempotencyLedger.js';
import type { AuditTrail } from './audit/auditTrail.js';
import type { QueuedDelivery, WebhookDeliveries } from './webhooks/webhookDeliveries.js';
import type { WebhookSource } from './webhooks/webhookSource.js';
import type { PlatformLink } from './gateway/platformLink.js';
import type { ClientRateLimiter } from './limits/clientRateLimiter.js';
import type { PlatformStream } from './streams/platformStream.js';
import type { Region } from '../shared/regions.js';

export interface Env {
  /** The platform registry (organizations, trade platforms, API clients). */
  DB: D1Database;
  /** Link objects, `LINKS_PER_PLATFORM` per trade platform (`<platform>#<n>`), each with one broker link. */
  LINKS: DurableObjectNamespace<PlatformLink>;
  /** Idempotency ledgers, per API client and key hash (`<clientId>#<n>`): the Idempotency-Key records. */
  IDEMPOTENCY: DurableObjectNamespace<IdempotencyLedger>;
  /** Audit trails, one per organization (workers/audit/). */
  AUDIT: DurableObjectNamespace<AuditTrail>;
  /** Webhook endpoints' deliveries, one object per endpoint (workers/webhooks/webhookDeliveries.ts). */
  WEBHOOKS: DurableObjectNamespace<WebhookDeliveries>;
  /** Webhook sources, one per platform some endpoint hears: its change stream made webhook events. */
  WEBHOOK_SOURCES: DurableObjectNamespace<WebhookSource>;
  /** The webhook deliveries queue (Cloudflare Queues): one message per event and endpoint. */
  WEBHOOK_DELIVERIES: Queue<QueuedDelivery>;
  /** Link objects per platform (default 4): how many single-threaded objects a platform's calls spread over. */
  LINKS_PER_PLATFORM?: string;
  /**
   * Rows a replicated table may hold in a link object's replica (default 10,000; 0 turns replicas off): a table past
   * it is not replicated and its reads go to the broker.
   */
  EDGE_REPLICA_MAX_ROWS?: string;
  EDGE_REPLICA_STORED_ROWS?: string;
  /** Ledgers per API client (default 16): how many objects one client's keys spread over. */
  IDEMPOTENCY_SHARDS?: string;
  /**
   * Megabytes of stored answers one ledger holds (default 4096; decimals allowed): past it the ledger refuses new keys
   * until older ones expire, so a client's keys hold at most IDEMPOTENCY_SHARDS times this.
   */
  IDEMPOTENCY_LEDGER_MAX_MB?: string;
  /** Bytes of one answer a ledger stores for replay (default and most 1,500,000); a larger one replays a note. */
  IDEMPOTENCY_ANSWER_MAX_BYTES?: string;
  /**
   * Rate-limit counters, one per purpose and key (a client's tokens or API calls, a source's failed token requests,
   * the edge's secret verifications): each counts across every edge isolate.
   */
  RATE_LIMITER: DurableObjectNamespace<ClientRateLimiter>;
  /** Stream objects, one per trade platform (named by its uuid): its broker subscription fanned out to SSE and hub clients. */
  STREAMS: DurableObjectNamespace<PlatformStream>;
  /** Stream objects per trade platform (default 1, at most 256), each with its own broker subscription and a share of the clients. */
  STREAM_SHARDS?: string;
  /** Least milliseconds between two writes of events to one stream client (default 10, 1 to 1000). */
  STREAM_FLUSH_MS?: string;
  /**
   * Seconds a hub socket that did not ask for flow checks may be sent data without a word from its client before its
   * output is held (default 30: twice a SignalR client's keep-alive interval).
   */
  STREAM_HUB_QUIET_SECONDS?: string;
  /** Seconds a hub socket may take to send its handshake before it is closed (default 15, as the reference server). */
  STREAM_HUB_HANDSHAKE_SECONDS?: string;
  /**
   * Base URL of the default broker (http(s)), or the ordered list of the default brokers separated by commas, for
   * platforms the registry names none; each link is `<url>/link` over WebSocket.
   */
  BROKER_URL?: string;
  /** Seconds a broker earlier in a platform's list must stay healthy before link objects return to it (default 10). */
  BROKER_FAILBACK_SECONDS?: string;
  /** Shared secret the broker expects on edge links. */
  BROKER_SECRET?: string;
  /** Private ES256 JWK (JSON) that signs access tokens; its public half is served at /.well-known/jwks.json. */
  AUTH_SIGNING_KEY?: string;
  /** Issuer of locally issued tokens and base of the discovery document. */
  PUBLIC_URL?: string;
  /** Audience tokens are issued for and verified against. */
  AUTH_AUDIENCE?: string;
  /** External identity provider mode: with both set, /connect/token is off and tokens verify against the remote JWKS. */
  AUTH_ISSUER?: string;
  AUTH_JWKS_URL?: string;
  /** Claim that carries the organization uuid in external tokens (default `org`). */
  AUTH_ORG_CLAIM?: string;
  /** Milliseconds a fetch of the external provider's keys may take (default 5000); past it the call is answered 503. */
  AUTH_JWKS_TIMEOUT_MS?: string;
  TOKEN_TTL_SECONDS?: string;
  /** Longest lifetime (exp − iat) a token may state; longer ones, and tokens issued in the future, are refused. */
  TOKEN_MAX_LIFETIME_SECONDS?: string;
  /**
   * Seconds a token is still accepted past its `exp` (and before its `nbf` and `iat`), for clock drift between issuer
   * and edge (default 5; 0 to 300): REST calls are refused and streams end at `exp` plus this.
   */
  TOKEN_CLOCK_TOLERANCE_SECONDS?: string;
  /**
   * Tokens issued per client per RATE_LIMIT_WINDOW_SECONDS (default 30; 0: unlimited): spent only by requests that
   * presented the client's right secret.
   */
  TOKEN_RATE_LIMIT?: string;
  /**
   * Failed token requests (unknown client id, wrong secret, disabled client) per source address per
   * RATE_LIMIT_WINDOW_SECONDS (default 30; 0: unlimited); past it the source's token requests answer 429 until the
   * window ends. The source is `CF-Connecting-IP` (an IPv6 address by its /64), or one shared local source.
   */
  TOKEN_FAILURE_LIMIT?: string;
  /**
   * Client secrets the edge verifies per RATE_LIMIT_WINDOW_SECONDS, all callers together (default 300; 0: unlimited):
   * each is a 100,000-iteration PBKDF2 (about 20 ms); past it token requests answer 429 until the window ends.
   */
  TOKEN_VERIFY_LIMIT?: string;
  /**
   * Objects counting TOKEN_FAILURE_LIMIT (default 16; 1 to 256): each source address is counted in one of them, by a
   * keyed hash, so a flood from ever new addresses costs no object per address.
   */
  TOKEN_FAILURE_SHARDS?: string;
  /** API calls per client per RATE_LIMIT_WINDOW_SECONDS (0: unlimited). */
  API_RATE_LIMIT?: string;
  /** Length of the rate-limit window in seconds. */
  RATE_LIMIT_WINDOW_SECONDS?: string;
  IDEMPOTENCY_RETENTION_HOURS?: string;
  /** Days the audit trail keeps a row (default 400; 0: no trail). */
  AUDIT_RETENTION_DAYS?: string;
  /** Webhooks (docs/webhooks.md): hours of retries, days failing before an endpoint is disabled, deliveries in flight per endpoint, a receiver's seconds, private targets (local only). */
  WEBHOOK_RETRY_HOURS?: string;
  WEBHOOK_DISABLE_AFTER_DAYS?: string;
  WEBHOOK_MAX_IN_FLIGHT?: string;
  WEBHOOK_TIMEOUT_SECONDS?: string;
  WEBHOOK_PRIVATE_TARGETS?: string;
  /** Non-tick events a stream client may have waiting before it is sent `overflow` and disconnected (default 5,000). */
  STREAM_MAX_BEHIND?: string;
  /** Seconds a found platform is remembered per isolate (default 5; 0 reads the registry on every call). */
  REGISTRY_CACHE_SECONDS?: string;
  /** `1`: every access-log line on its own `console.log` call; otherwise an isolate's lines are written in batches. */
  ACCESS_LOG_BATCH?: string;
  /** Browser origins that may call the gateway: `*`, or origins separated by commas or spaces; unset: none. */
  CORS_ORIGINS?: string;
  /** The region of requests without `request.cf` (a local edge): a location hint, default `weur` (docs/regions.md). */
  EDGE_REGION?: string;
  /** The home region of a platform whose registry row names none: a location hint, default `weur` (docs/regions.md). */
  HOME_REGION?: string;
  /** Where each region's objects connect to the brokers, as JSON: region → broker URL → URL (docs/regions.md). */
  REGION_BROKER_ROUTES?: string;
  /** `1`: serve the reference web terminal at /terminal (off unless set). */
  TERMINAL?: string;
  /** Bearer token of `GET /metrics` (Prometheus); unset: no /metrics. A secret (`wrangler secret put`). */
  METRICS_TOKEN?: string;
}

/** Who is calling, from a verified access token. */
export interface Caller {
  clientId: string;
  organizationId: string;
  scopes: string[];
  /** When the edge stops accepting the access token (epoch ms): its `exp` plus the clock tolerance; streams end then. */
  expiresAt?: number;
  /** The request's source address as Cloudflare's front names it (workers/limits/requestSource.ts); null: not known. */
  address?: string | null;
}

export interface AppEnv {
  Bindings: Env;
  Variables: {
    caller: Caller;
    /** W3C trace id of this request (from `traceparent`, else new): `meta.activityId` and the broker's log key. */
    traceId: string;
    /** How the answer ended (`ok` or an error code), set by the operation routes for the access log. */
    outcome: string;
    /** The catalog id of the operation answered, set by its route for the access log. */
    operation: string;
    /** The region the request belongs to (workers/regions/callerRegion.ts). */
    region: Region;
  };
}
