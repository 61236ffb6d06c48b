/**
 * A stream object: one Durable Object per trade platform (named by its uuid, or the uuid and a shard) that holds the
 * platform's one stream subscription to the broker and fans its events out to every client of the platform: Server-
 * Sent Events responses and SignalR hub WebSockets. The object owns and wires its parts, each in its own file:
 *
 * - `BrokerSubscription` (brokerSubscription.ts): the subscription on the first healthy broker of the platform's list,
 *   its heartbeat, and its moves to the next broker (drain, loss, hang, refusal), each followed by a `resync`;
 * - `EventRing` (eventRing.ts): every event's id, the last events held for a reconnect's replay, and the status;
 * - `ClientPass` (clientPass.ts): the passes that write each client what it lacks (fanout.ts: what is written);
 * - `SseStreams` (sseStreams.ts) and `HubSockets` (hubSockets.ts, with the hub protocol's messages in hubMessages.ts):
 *   the two kinds of client, seen by the passes, the re-check and the keep-alive through one interface
 *   (`StreamClient`, clients.ts);
 * - `StandingCheck` (standingCheck.ts): the re-check of the clients' standing every REGISTRY_CACHE_SECONDS.
 *
 * The object keeps the keep-alive: every PING_MS each client is pinged, and once nobody listens the subscription is
 * closed and the object goes idle.
 */
import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../env.js';
import { configOf } from '../config.js';
import type { FailoverReason } from '../../shared/frames.js';
import { setMaxBehind, setQuietMs, type RingEvent } from './fanout.js';
import { StreamBrokers } from './streamBrokers.js';
import type { StreamClient } from './clients.js';
import { authConfig } from '../auth/authConfig.js';
import { admit, apiRateMessage } from '../limits/rateLimit.js';
import { RegistryStore } from '../registry/registryStore.js';
import { recheckMs } from './standing.js';
import { EventRing } from './eventRing.js';
import { ClientPass } from './clientPass.js';
import { BrokerSubscription } from './brokerSubscription.js';
import { SseStreams } from './sseStreams.js';
import { HubSockets } from './hubSockets.js';
import { StandingCheck } from './standingCheck.js';
import {
  readStreamRequest,
  restoredConfig,
  sseInterest,
  type StoredConfig,
  type StreamConfig,
} from './streamRequest.js';

const PING_MS = 15_000;

export class PlatformStream extends DurableObject<Env> {
  private config: StreamConfig | undefined;
  private readonly ring = new EventRing();
  private delivered = 0;
  private readonly sse = new SseStreams(this.ring, () => {
    this.delivered++;
  });
  private readonly hubs = new HubSockets({
    ctx: this.ctx,
    handshakeSeconds: () => configOf(this.env).STREAM_HUB_HANDSHAKE_SECONDS,
    seq: () => this.ring.seq,
    sent: () => {
      this.delivered++;
    },
    connected: () => this.ring.connected,
    admit: async (clientId) => {
      const admission = await admit(this.env, 'api', clientId);
      return admission.ok ? null : apiRateMessage(this.env, admission.retryAfterSeconds);
    },
  });
  private readonly passes = new ClientPass(this.ring, {
    clients: () => this.clients(),
    flushMs: () => configOf(this.env).STREAM_FLUSH_MS,
  });
  private readonly subscription = new BrokerSubscription({
    config: () => this.config,
    secret: () => configOf(this.env).BROKER_SECRET ?? '',
    hasClients: () => this.hasClients(),
    publish: (event) => this.publish(event),
    disconnected: () => this.disconnected(),
  });
  private readonly standing = new StandingCheck({
    clients: () => this.clients(),
    registry: () => new RegistryStore(this.env.DB),
    externalClients: () => authConfig(this.env).mode === 'external',
  });
  private pinger: ReturnType<typeof setInterval> | undefined;
  private checker: ReturnType<typeof setInterval> | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    setMaxBehind(configOf(env).STREAM_MAX_BEHIND);
    setQuietMs(configOf(env).STREAM_HUB_QUIET_SECONDS * 1000);
  }

  override async fetch(request: Request): Promise<Response> {
    const { config, caller, hub } = readStreamRequest(request.headers);
    await this.configure(config);
    if (hub) return this.hubs.accept(config.family, caller);
    return this.sse.start(sseInterest(request.headers), caller, request.headers.get('last-event-id'));
  }

  /** Counters for tests and the bench. */
  stats(): {
    sse: number;
    hubs: number;
    flows: number;
    connected: boolean;
    seq: number;
    delivered: number;
    epoch: string;
    slowHubs: number;
    broker: string | null;
    subscribed: boolean;
    failovers: Partial<Record<FailoverReason, number>>;
  } {
    const { flows, slowHubs } = this.hubs.stats();
    return {
      sse: this.sse.size,
      hubs: this.hubs.count,
      flows,
      connected: this.ring.connected,
      seq: this.ring.seq,
      delivered: this.delivered,
      epoch: this.ring.epoch,
      slowHubs,
      ...this.subscription.stats(),
    };
  }

  /**
   * Every REGISTRY_CACHE_SECONDS: the streams that may not go on are ended (standingCheck.ts); answers how many.
   */
  async recheck(): Promise<number> {
    if (!this.config) return 0;
    return this.standing.run(this.config);
  }

  private async configure(config: StreamConfig): Promise<void> {
    const changed =
      this.config === undefined || StreamBrokers.key(this.config.brokerUrls) !== StreamBrokers.key(config.brokerUrls);
    this.config = config;
    this.ring.setShard(config.shard);
    if (changed) await this.ctx.storage.put('config', config);
    this.subscription.use(config.brokerUrls);
    this.subscription.ensure();
    this.startTimers();
  }

  private startTimers(): void {
    this.pinger ??= setInterval(() => this.ping(), PING_MS);
    this.checker ??= setInterval(() => void this.recheck(), recheckMs(configOf(this.env).REGISTRY_CACHE_SECONDS));
  }

  /** After a wake from hibernation the config comes back from storage. */
  private async restore(): Promise<void> {
    if (this.config) return;
    const stored = await this.ctx.storage.get<StoredConfig>('config');
    if (stored) this.config = restoredConfig(stored);
    if (this.config) {
      this.ring.setShard(this.config.shard ?? 0);
      this.subscription.use(this.config.brokerUrls);
      this.subscription.ensure();
      this.startTimers();
    }
  }

  private hasClients(): boolean {
    return this.sse.size > 0 || this.hubs.count > 0;
  }

  /** Every client the object has: SSE streams, then the hub sockets not let go. */
  private clients(): StreamClient[] {
    return [...this.sse.clients(), ...this.hubs.clients()];
  }

  private publish(event: RingEvent): void {
    if (this.ring.publish(event)) this.passes.wake();
  }

  /** The clients are told the platform's stream is down (once: the ring adds changes of status only). */
  private disconnected(): void {
    if (this.ring.connected) this.publish({ topic: 'status', data: { connected: false } });
  }

  private ping(): void {
    for (const client of this.clients()) client.ping();
    if (!this.hasClients()) {
      // Nobody listens: let the object go idle.
      if (this.pinger !== undefined) clearInterval(this.pinger);
      this.pinger = undefined;
      if (this.checker !== undefined) clearInterval(this.checker);
      this.checker = undefined;
      this.ring.idle(this.subscription.stop('no clients'));
    }
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    await this.restore();
    await this.hubs.message(ws, message);
  }

  override webSocketClose(ws: WebSocket, code: number): void {
    this.hubs.forget(ws);
    try {
      ws.close(code === 1005 ? 1000 : code, 'closed');
    } catch {
      /* already */
    }
  }

  override webSocketError(ws: WebSocket): void {
    this.hubs.forget(ws);
  }
}
