/**
 * A stream object: one Durable Object per trade platform (named by its uuid) that holds the platform's one stream
 * subscription to the broker (`#subscribe`, `shared/frames.ts`) and fans its events out to every client of the
 * platform: Server-Sent Events responses and SignalR hub WebSockets (accepted with the WebSocket Hibernation API, so
 * an idle hub client costs no CPU between events).
 *
 * Every event gets an id, `<epoch>-<seq>` (the epoch is new each time the object starts), and the last
 * `STREAM_RING_SIZE` events are kept, so an EventSource that reconnects with `Last-Event-ID` is sent what it missed;
 * one whose id is older than the ring, or from another epoch, is sent a `resync` event instead. The clients are
 * written to by passes over them (`pass`): each client is given what it lacks, in one write or message, and the pass
 * yields every SLICE clients, so an event that arrives mid-pass reaches the clients the pass has not come to yet.
 * Towards each client, ticks are conflated per symbol (a slow client gets the latest price of each symbol), and every
 * other event is queued; a client more than `MAX_BEHIND` events behind is sent `overflow` and disconnected, never
 * silently skipped. The passes, the re-check of the clients' standing and the keep-alive see both kinds of client
 * through one interface (`StreamClient`, clients.ts).
 *
 * The subscription is held on the first healthy broker of the platform's ordered list (`StreamBrokers`). With more
 * than one broker the one in use is pinged on the subscription's socket every `LINK_PING_EVERY_MS`; a ping unanswered
 * within `LINK_PING_TIMEOUT_MS` (a hung broker), a socket lost, an upgrade failing, a subscription refused or a drain
 * notice moves the subscription to the next broker of the list, which is told why (`#failover`); a broker left is
 * tried again after a backoff, and a broker alone is reconnected to after it. A draining broker's events keep coming
 * until the next broker accepted the subscription; any other loss is pushed to clients at once as a status
 * `{connected: false}`. Two brokers' event streams are independent, and a broker's events while nobody subscribed are
 * gone: every subscription that follows a lost or left one begins with a `resync` event (kept in the ring like any
 * other), sent to the clients that asked for record changes (fanout.ts, `RESYNC_TOPICS`), then the new broker's
 * status tells them the stream is whole again.
 */
import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../env.js';
import { configOf } from '../config.js';
import {
  FAILOVER_OP, LINK_PATH, LINK_PING_EVERY_MS, LINK_PING_TIMEOUT_MS, PING_OP, SUBSCRIBE_OP,
  type DrainFrame, type FailoverArgs, type FailoverReason, type PingReport, type StreamBatchFrame, type StreamFrame,
} from '../../shared/frames.js';
import type { Family } from '../../shared/protocol.js';
import { topicsOf, type StreamTopic } from '../../shared/streams.js';
import { Encoded, FLOW_CONTROL_METHOD, setMaxBehind, setQuietMs, SseSink, type Interest, type RingEvent } from './fanout.js';
import { StreamBrokers } from './streamBrokers.js';
import { HubClient, savedHubState, SharedChunks, SseClient, type HubState, type StreamClient } from './clients.js';
import * as hub from './signalr.js';
import { parseJson } from '../../shared/losslessJson.js';
import { authConfig } from '../auth/authConfig.js';
import { admit, apiRateMessage } from '../limits/rateLimit.js';
import { RegistryStore } from '../registry/registryStore.js';
import { recheckMs, streamEnd, type StreamCaller } from './standing.js';

export const STREAM_RING_SIZE = 10_000;
export { MAX_BEHIND } from './fanout.js';
const PING_MS = 15_000;
/** Clients written to in one turn of a pass; then the object yields, so the broker's frames are read in between. */
const SLICE = 64;
/** An SSE client whose write is still outstanding this many events behind is held and conflated at once (SseClient). */
const HOLD_AFTER = STREAM_RING_SIZE / 2;
/** Per hub socket: tick symbols subscribed with SubscribeToTicks, open server streams, and the length of each name. */
export const MAX_HUB_TICK_SYMBOLS = 256;
export const MAX_HUB_STREAMS = 64;
export const MAX_HUB_NAME = 64;

/** What the edge route tells the object about the platform (internal headers, never from a client). */
export const STREAM_HEADERS = {
  platform: 'x-stream-platform', family: 'x-stream-family', broker: 'x-stream-broker', topics: 'x-stream-topics', symbols: 'x-stream-symbols',
  kind: 'x-stream-kind', shard: 'x-stream-shard', client: 'x-stream-client', organization: 'x-stream-organization', expires: 'x-stream-expires',
} as const;

/** The platform as the route described it; `brokerUrls` in order, the first preferred. */
interface Config { platform: string; family: Family; brokerUrls: string[]; shard: number }

/** One WebSocket to one broker of the platform's list, and the subscription on it. */
interface Leg {
  ws: WebSocket;
  /** The broker's place in the list, and its URL. */
  index: number;
  url: string;
  /** The broker accepted the subscription: its events are the platform's stream. */
  subscribed: boolean;
  /** The next frame id on the leg (`SUBSCRIPTION_ID` is the subscription's). */
  nextId: number;
  /** The heartbeat awaiting its answer, and when it was sent. */
  ping: { id: number; at: number } | undefined;
}

/** The subscription's frame id on every leg. */
const SUBSCRIPTION_ID = 1;
/** With another broker to go to, opening a leg gives up after this (a stopped broker accepts and never answers). */
export const PAIRED_CONNECT_TIMEOUT_MS = 1500;
const RESYNC_MESSAGE = 'events may have been missed while the stream was interrupted: read the current state again';

const HUB_STREAMS: Record<Family, Record<string, StreamTopic>> = {
  PF4: { StreamTicks: 'ticks', StreamTrades: 'trades', StreamUserUpdates: 'users', StreamSymbolUpdates: 'symbols', StreamMarginCallUpdates: 'margin' },
  PF5: { StreamTicks: 'ticks', StreamPositions: 'positions', StreamOrders: 'orders', StreamDeals: 'deals', StreamUserUpdates: 'users', StreamMarginCallUpdates: 'margin' },
};

export class PlatformStream extends DurableObject<Env> {
  private config: Config | undefined;
  /** Event ids' prefix: the shard (two hex digits, so a reconnect finds its object again) and six random ones. */
  private epoch = '00' + crypto.randomUUID().slice(0, 6);
  private seq = 0;
  private readonly ring: Encoded[] = [];
  /** The pass over the clients: its next turn, its clients in order, and where it is. */
  private passTimer: ReturnType<typeof setTimeout> | undefined;
  private roster: StreamClient[] = [];
  private cursor = 0;
  /** Of the pass so far: the soonest a client that still lacks events may be written to again. */
  private passDue = Infinity;
  /** When the next turn runs, and the newest event when the pass began. */
  private passAt = 0;
  private passSeq = 0;
  private readonly sse = new Set<SseClient>();
  private readonly hubs = new Map<WebSocket, HubClient>();
  /** Sockets let go (closed, ended or refused): not handled again, and no client made for them again. */
  private readonly gone = new WeakSet<WebSocket>();
  /** The platform's brokers, the leg to the one in use, and a draining broker's leg kept until the next subscribes. */
  private brokers: StreamBrokers | undefined;
  private leg: Leg | undefined;
  private outgoing: Leg | undefined;
  private connecting = false;
  private connected = false;
  /** The status went down and no `resync` was published since: the next status up is preceded by one. */
  private owesResync = false;
  private retry: ReturnType<typeof setTimeout> | undefined;
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  /** A subscription was lost or left: the next one accepted begins with a resync notice. */
  private gap = false;
  /** Why the last broker was left, told to the next one when its leg opens. */
  private moveReason: FailoverReason | undefined;
  private pinger: ReturnType<typeof setInterval> | undefined;
  private delivered = 0;
  private checker: ReturnType<typeof setInterval> | undefined;
  private checking = false;
  /** Per hub socket, its messages handled in order (an invocation waits for its admission). */
  private readonly hubQueues = new Map<WebSocket, Promise<void>>();
  /** Hub sockets accepted and not yet handshaken, with their deadline (epoch ms). */
  private readonly awaitingHandshake = new Map<WebSocket, number>();
  private handshakeTimer: ReturnType<typeof setInterval> | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    setMaxBehind(configOf(env).STREAM_MAX_BEHIND);
    setQuietMs(configOf(env).STREAM_HUB_QUIET_SECONDS * 1000);
  }

  override async fetch(request: Request): Promise<Response> {
    const h = request.headers;
    const family = h.get(STREAM_HEADERS.family) as Family;
    const shard = Math.max(0, Math.min(255, Number(h.get(STREAM_HEADERS.shard) ?? 0) || 0));
    const brokerUrls = (h.get(STREAM_HEADERS.broker) ?? '').split(',').map((u) => u.trim()).filter(Boolean);
    const config: Config = { platform: h.get(STREAM_HEADERS.platform) ?? '', family, brokerUrls, shard };
    await this.configure(config);
    const caller: StreamCaller = {
      clientId: h.get(STREAM_HEADERS.client) ?? '', organizationId: h.get(STREAM_HEADERS.organization) ?? '',
      expiresAt: Number(h.get(STREAM_HEADERS.expires) ?? 0) || 0,
    };
    if (h.get(STREAM_HEADERS.kind) === 'hub') return this.acceptHub(family, caller);
    return this.openSse(request, caller);
  }

  /** Counters for tests and the bench. */
  stats(): {
    sse: number; hubs: number; flows: number; connected: boolean; seq: number; delivered: number; epoch: string; slowHubs: number;
    broker: string | null; subscribed: boolean; failovers: Partial<Record<FailoverReason, number>>;
  } {
    let flows = 0;
    let slowHubs = 0;
    for (const c of this.hubs.values()) {
      if (c.flowing) flows++;
      if (c.slow) slowHubs++;
    }
    return {
      sse: this.sse.size, hubs: this.ctx.getWebSockets().length, flows, connected: this.connected, seq: this.seq, delivered: this.delivered, epoch: this.epoch, slowHubs,
      broker: this.leg?.url ?? null, subscribed: this.leg?.subscribed ?? false, failovers: { ...this.brokers?.failovers },
    };
  }

  private setShard(shard: number): void {
    if (this.seq === 0) this.epoch = shard.toString(16).padStart(2, '0') + this.epoch.slice(2);
  }

  private async configure(config: Config): Promise<void> {
    const changed = this.config === undefined || StreamBrokers.key(this.config.brokerUrls) !== StreamBrokers.key(config.brokerUrls);
    this.config = config;
    this.setShard(config.shard);
    if (changed) await this.ctx.storage.put('config', config);
    this.useBrokers(config.brokerUrls);
    this.ensureBroker();
    this.startTimers();
  }

  /** The platform's list of brokers; one that differs from the list in use (the registry moved it) starts afresh. */
  private useBrokers(urls: string[]): void {
    if (urls.length === 0 || this.brokers?.key === StreamBrokers.key(urls)) return;
    if (this.brokers) this.closeLegs('platform moved');
    this.moveReason = undefined;
    this.brokers = new StreamBrokers(urls);
  }

  private startTimers(): void {
    this.pinger ??= setInterval(() => this.ping(), PING_MS);
    this.checker ??= setInterval(() => void this.recheck(), recheckMs(configOf(this.env).REGISTRY_CACHE_SECONDS));
  }

  /** After a wake from hibernation the config comes back from storage. */
  private async restore(): Promise<void> {
    if (this.config) return;
    // A config stored before platforms had lists names its one broker.
    const stored = await this.ctx.storage.get<Omit<Config, 'brokerUrls'> & { brokerUrls?: string[]; brokerUrl?: string }>('config');
    if (stored) {
      const { brokerUrl, ...rest } = stored;
      this.config = { ...rest, brokerUrls: stored.brokerUrls ?? (brokerUrl ? [brokerUrl] : []) };
    }
    if (this.config) {
      this.setShard(this.config.shard ?? 0);
      this.useBrokers(this.config.brokerUrls);
      this.ensureBroker();
      this.startTimers();
    }
  }

  // ---- broker subscription -------------------------------------------------------------------------------------

  private hasClients(): boolean {
    return this.sse.size > 0 || this.ctx.getWebSockets().length > 0;
  }

  /** Opens a leg to the broker in use unless one is open or opening, or that broker is still waiting out its backoff. */
  private ensureBroker(): void {
    const config = this.config;
    const brokers = this.brokers;
    if (this.leg || this.connecting || this.retry || !config || !brokers) return;
    const wait = brokers.waitMs();
    if (wait > 0) {
      this.retry = setTimeout(() => {
        this.retry = undefined;
        if (this.hasClients()) this.ensureBroker();
      }, wait);
      return;
    }
    this.connecting = true;
    void this.connectBroker(config, brokers, brokers.current).finally(() => {
      this.connecting = false;
      // Left while opening (unreachable, refused): the next broker, or this one after its backoff.
      if (this.hasClients()) this.ensureBroker();
    });
  }

  private async connectBroker(config: Config, brokers: StreamBrokers, index: number): Promise<void> {
    const brokerUrl = brokers.urls[index];
    try {
      const url = new URL(LINK_PATH, brokerUrl.endsWith('/') ? brokerUrl : `${brokerUrl}/`);
      const upgrade = fetch(url.toString(), { headers: { Upgrade: 'websocket', Authorization: `Bearer ${configOf(this.env).BROKER_SECRET ?? ''}` } });
      // A stopped broker's kernel still accepts the connection: with another broker to go to, the upgrade is bounded.
      let timer: ReturnType<typeof setTimeout> | undefined;
      let late = false;
      const res = brokers.paired
        ? await Promise.race([upgrade, new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            late = true;
            reject(new Error(`no upgrade within ${PAIRED_CONNECT_TIMEOUT_MS} ms`));
          }, PAIRED_CONNECT_TIMEOUT_MS);
        })]).finally(() => clearTimeout(timer))
        : await upgrade;
      // An upgrade that comes after its time is let go.
      void upgrade.then((r) => {
        if (!late || !r.webSocket) return;
        try { r.webSocket.accept(); r.webSocket.close(1000, 'too late'); } catch { /* gone */ }
      }, () => { /* failed: nothing to let go */ });
      const ws = res.webSocket;
      if (!ws) throw new Error(`link refused with HTTP ${res.status}`);
      ws.accept();
      if (this.brokers !== brokers) {
        // The platform's list changed while this one opened.
        try { ws.close(1000, 'platform moved'); } catch { /* gone */ }
        return;
      }
      const leg: Leg = { ws, index, url: brokerUrl, subscribed: false, nextId: 2, ping: undefined };
      this.leg = leg;
      ws.addEventListener('message', (ev) => this.onBrokerFrame(ws, typeof ev.data === 'string' ? ev.data : new TextDecoder().decode(ev.data)));
      ws.addEventListener('close', () => this.onBrokerLost(ws));
      ws.addEventListener('error', () => this.onBrokerLost(ws));
      if (this.moveReason) {
        // The broker moved to is told why (it counts it); the notice's answer is not waited for.
        const args: FailoverArgs = { reason: this.moveReason, kind: 'stream' };
        this.moveReason = undefined;
        ws.send(JSON.stringify({ id: leg.nextId++, platform: config.platform, op: FAILOVER_OP, args, timeoutMs: 5000 }));
      }
      ws.send(JSON.stringify({ id: SUBSCRIPTION_ID, platform: config.platform, op: SUBSCRIBE_OP, args: { topics: topicsOf(config.family), batch: true }, timeoutMs: 10_000 }));
      this.startHeartbeat();
    } catch (err) {
      console.warn(JSON.stringify({ msg: 'stream link to the broker failed', platform: config.platform, broker: brokerUrl, error: String(err) }));
      if (this.brokers === brokers && !this.leg) this.leave('unreachable');
    }
  }

  private onBrokerFrame(ws: WebSocket, text: string): void {
    const leg = ws === this.leg?.ws ? this.leg : ws === this.outgoing?.ws ? this.outgoing : undefined;
    if (!leg) return;
    let frame: Partial<StreamFrame> & Partial<Pick<StreamBatchFrame, 'events'>> & Partial<DrainFrame> & {
      id?: number; ok?: boolean; data?: unknown; error?: { message?: string }; notTaken?: true;
    };
    // Lossless: PF5 ids beyond 2^53 − 1 in events stay exact bigints (written back as digits by `Encoded`).
    try { frame = parseJson(text) as typeof frame; } catch { return; }
    if (typeof frame.drain === 'object' && frame.drain !== null) {
      if (leg === this.leg) this.drain(leg);
      return;
    }
    if (frame.id === SUBSCRIPTION_ID) {
      if (leg !== this.leg) return;
      if (frame.ok === false) {
        console.warn(JSON.stringify({ msg: 'stream subscription refused', broker: leg.url, error: frame.error?.message }));
        this.leave(frame.notTaken ? 'draining' : 'unreachable');
      } else {
        this.onSubscribed(leg);
      }
      return;
    }
    if (typeof frame.id === 'number') {
      if (leg.ping?.id !== frame.id) return;
      leg.ping = undefined;
      const report = frame.ok ? frame.data as Partial<PingReport> | null : null;
      // A broker from before heartbeats answers the ping with an error: it is alive all the same.
      if (report && (report.draining === true || report.platform === 'absent')) this.drain(leg);
      return;
    }
    if (typeof frame.sub !== 'number') return;
    // A batched frame is one turn of the broker's events; a broker that does not batch sends one event a frame.
    if (Array.isArray(frame.events)) for (const event of frame.events) this.publish(event);
    else if (frame.event) this.publish(frame.event);
  }

  /**
   * A broker accepted the subscription: its events are the platform's stream from now on. After a gap (a
   * subscription lost or left before this one) the clients are told their status dropped and to resync, before the
   * new broker's first event, its status.
   */
  private onSubscribed(leg: Leg): void {
    leg.subscribed = true;
    this.brokers?.subscribed(leg.index);
    const old = this.outgoing;
    this.outgoing = undefined;
    if (old) {
      try { old.ws.close(1000, 'moved to the next broker'); } catch { /* gone */ }
    }
    if (this.gap) {
      this.gap = false;
      this.disconnected();
      this.publish({ topic: 'resync', data: { message: RESYNC_MESSAGE } });
    }
  }

  /**
   * The broker in use is left (`reason`): its leg is closed and the clients told the stream is down; the next broker
   * of the list (or this one, when it is alone) is subscribed on, at once or after its backoff.
   */
  private leave(reason: FailoverReason): void {
    const brokers = this.brokers;
    if (!brokers) return;
    const leg = this.leg;
    this.leg = undefined;
    if (leg) this.closeLeg(leg, reason);
    if (!this.outgoing?.subscribed) this.disconnected();
    if (brokers.leave(leg?.index ?? brokers.current, reason)) this.moveReason = reason;
    this.ensureBroker();
  }

  /**
   * The broker in use says it is draining (a drain frame, or a ping's report): with another broker to go to, the next
   * one is subscribed on first, and this one's events keep coming until then. A broker alone is kept until it goes.
   */
  private drain(leg: Leg): void {
    const brokers = this.brokers;
    if (!brokers?.paired || leg !== this.leg) return;
    this.leg = undefined;
    if (leg.subscribed) {
      const older = this.outgoing;
      if (older) this.closeLeg(older, 'draining');
      this.outgoing = leg;
      this.gap = true;
    } else {
      this.closeLeg(leg, 'draining');
    }
    if (brokers.leave(leg.index, 'draining')) this.moveReason = 'draining';
    this.ensureBroker();
  }

  private closeLeg(leg: Leg, why: string): void {
    if (leg.subscribed) this.gap = true;
    try { leg.ws.close(1000, why); } catch { /* gone */ }
  }

  private onBrokerLost(ws: WebSocket): void {
    if (ws === this.outgoing?.ws) {
      // The draining broker went before the next one took the subscription.
      this.outgoing = undefined;
      if (!this.leg?.subscribed) this.disconnected();
      return;
    }
    if (ws !== this.leg?.ws) return;
    this.leave('lost');
  }

  /** The clients are told the platform's stream is down (once: `publish` passes on changes of status only). */
  private disconnected(): void {
    if (this.connected) this.publish({ topic: 'status', data: { connected: false } });
  }

  /** With more than one broker, the one in use is pinged on its leg; a ping unanswered in time is a hung broker. */
  private startHeartbeat(): void {
    if (!this.brokers?.paired || this.heartbeat !== undefined) return;
    this.heartbeat = setInterval(() => this.beat(), LINK_PING_EVERY_MS);
  }

  private beat(): void {
    const leg = this.leg;
    if (!leg || !this.config || !this.brokers?.paired) {
      // Nothing open (or one broker left in the list): the heartbeat starts again with the next leg of a pair.
      clearInterval(this.heartbeat);
      this.heartbeat = undefined;
      return;
    }
    const now = Date.now();
    if (leg.ping) {
      if (now - leg.ping.at >= LINK_PING_TIMEOUT_MS) {
        console.warn(JSON.stringify({ msg: 'stream broker hung: no answer to a ping', platform: this.config.platform, broker: leg.url }));
        this.leave('hung');
      }
      return;
    }
    leg.ping = { id: leg.nextId++, at: now };
    try {
      leg.ws.send(JSON.stringify({ id: leg.ping.id, platform: this.config.platform, op: PING_OP, args: {}, timeoutMs: LINK_PING_TIMEOUT_MS }));
    } catch { /* closing: its close event follows */ }
  }

  /** Every leg is closed (no clients, or the platform's list changed). */
  private closeLegs(why: string): void {
    for (const leg of [this.leg, this.outgoing]) if (leg) this.closeLeg(leg, why);
    this.leg = undefined;
    this.outgoing = undefined;
    if (this.retry !== undefined) clearTimeout(this.retry);
    this.retry = undefined;
    this.disconnected();
  }

  private ping(): void {
    for (const client of this.clients()) client.ping();
    if (this.sse.size === 0 && this.ctx.getWebSockets().length === 0) {
      // Nobody listens: let the object go idle.
      if (this.pinger !== undefined) clearInterval(this.pinger);
      this.pinger = undefined;
      if (this.checker !== undefined) clearInterval(this.checker);
      this.checker = undefined;
      this.closeLegs('no clients');
      // Nobody listens, so nobody is owed a resync for what the next subscription's status follows.
      this.owesResync = false;
      if (this.gap) {
        // Events go unseen from now on: a client back with an id from before is told to resync (another epoch), and
        // a new client, which reads the state as it connects, is owed no resync.
        this.gap = false;
        this.ring.length = 0;
        this.epoch = this.epoch.slice(0, 2) + crypto.randomUUID().slice(0, 6);
      }
    }
  }

  // ---- the clients' standing --------------------------------------------------------------------------------------

  /**
   * Every REGISTRY_CACHE_SECONDS: each stream whose token expired, whose client lost its standing or whose platform
   * left its organization is ended (standing.ts), SSE with a last `closed` event, a hub socket with a Close message
   * (allowing a reconnect when only the token expired). The registry is read once for the platform and once per 100 clients.
   */
  async recheck(): Promise<number> {
    if (this.checking || !this.config) return 0;
    const clients = this.clients();
    if (clients.length === 0) return 0;
    this.checking = true;
    try {
      const store = new RegistryStore(this.env.DB);
      const ids = new Set<string>();
      for (const client of clients) ids.add(client.caller.clientId);
      const [platform, standingOf] = await Promise.all([store.findAnyPlatform(this.config.platform), store.findClientStandings([...ids])]);
      const platformOrganization = platform && platform.platform.type === this.config.family ? platform.platform.organizationId : null;
      const externalClients = authConfig(this.env).mode === 'external';
      const now = Date.now();
      const endOf = (caller: StreamCaller) =>
        streamEnd(caller, now, { standing: standingOf.get(caller.clientId) ?? null, platformOrganization, externalClients });
      let ended = 0;
      for (const client of clients) {
        if (client.closed) continue;
        const end = endOf(client.caller);
        if (end) { client.end(end); ended++; }
      }
      return ended;
    } catch (error) {
      // The registry cannot be read: the streams go on, and the next check tries again.
      console.warn(JSON.stringify({ msg: 'stream clients could not be re-checked', platform: this.config.platform, error: String(error) }));
      return 0;
    } finally {
      this.checking = false;
    }
  }

  /** Every client the object has: SSE streams, then the hub sockets not let go. */
  private clients(): StreamClient[] {
    const hubs = this.ctx.getWebSockets().filter((ws) => !this.gone.has(ws)).map((ws) => this.hubOf(ws));
    return [...this.sse, ...hubs];
  }

  // ---- fan-out ---------------------------------------------------------------------------------------------------

  private publish(event: RingEvent): void {
    if (event.topic === 'status') {
      // A broker's session down is owed a resync when it comes up, even when the clients were told down already (a
      // new subscription on a broker whose session is still logging in).
      if (!event.data.connected) this.owesResync = true;
      if (event.data.connected === this.connected) return;
      this.connected = event.data.connected;
      if (this.connected && this.owesResync) {
        // Down, then up again on the same subscription: the broker's manager session dropped and logged in again, and
        // the platform's changes while it was away came in its new snapshot, not as events. The clients are told so
        // before the status, as after a move to another broker.
        this.publish({ topic: 'resync', data: { message: RESYNC_MESSAGE } });
      }
    } else if (event.topic === 'resync') {
      this.owesResync = false;
    }
    const seq = ++this.seq;
    this.ring.push(new Encoded(seq, `${this.epoch}-${seq}`, event));
    if (this.ring.length > STREAM_RING_SIZE) this.ring.shift();
    // Not at once: the rest of the frame's burst goes with it. A pass waiting for a client to be due is brought
    // forward, since a client that was not written to lately may take this event now.
    if (this.passTimer === undefined || (this.cursor === 0 && this.passAt > Date.now())) this.schedulePass(0);
  }

  private schedulePass(wait: number): void {
    if (this.passTimer !== undefined) clearTimeout(this.passTimer);
    this.passAt = Date.now() + wait;
    this.passTimer = setTimeout(() => this.pass(), wait);
  }

  /**
   * One turn of the pass over the clients: up to SLICE of them, in order, are each written what they lack, in one
   * write or message (SSE clients of one interest lacking the same events share one encoded chunk). Then the object
   * yields and the next turn goes on where this one stopped, so an event read meanwhile reaches the clients not yet
   * written to in this pass, rather than waiting for all of them. A client is written to at most every
   * `STREAM_FLUSH_MS`, so a busy platform's events gather per client; a pass that left a client lacking events is
   * followed by another when that client is due.
   */
  private pass(): void {
    this.passTimer = undefined;
    const now = Date.now();
    const interval = configOf(this.env).STREAM_FLUSH_MS;
    if (this.cursor === 0) {
      this.roster = this.clients();
      this.passDue = Infinity;
      this.passSeq = this.seq;
    }
    const seq = this.seq;
    const ranges = new Map<number, Encoded[]>();
    const rangeAfter = (sent: number): Encoded[] | null => {
      let range = ranges.get(sent);
      if (!range) {
        const at = sent + 1 - (this.ring[0]?.seq ?? seq + 1);
        if (at < 0) return null;
        range = this.ring.slice(at);
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
        this.passDue = Math.min(this.passDue, now + interval);
        continue;
      }
      if (now - client.lastAt < interval) {
        this.passDue = Math.min(this.passDue, client.lastAt + interval);
        continue;
      }
      client.sentSeq = seq;
      client.lastAt = now;
      client.deliver(range, chunks);
    }
    if (this.cursor < this.roster.length) {
      this.schedulePass(0);
      return;
    }
    this.cursor = 0;
    this.roster = [];
    // A client lacks events (it was not due, or they came after its turn): another pass, when the first is due, and
    // for events that came during this pass an interval after it ended. That rest keeps the thread from spending all
    // its time on passes under load (docs/streams.md, "Fan-out and flow control").
    if (this.seq > this.passSeq) this.passDue = Math.min(this.passDue, now + interval);
    if (this.passDue !== Infinity) this.schedulePass(Math.max(0, this.passDue - Date.now()));
  }

  // ---- Server-Sent Events ----------------------------------------------------------------------------------------

  private openSse(request: Request, caller: StreamCaller): Response {
    const topics = new Set((request.headers.get(STREAM_HEADERS.topics) ?? '').split(',').filter(Boolean) as StreamTopic[]);
    const symbolsHeader = request.headers.get(STREAM_HEADERS.symbols);
    const interest: Interest = { topics, symbols: symbolsHeader ? new Set(symbolsHeader.split(',')) : null };
    // A native stream without a queue: a write completes when the response has taken the bytes.
    const { readable, writable } = new IdentityTransformStream();
    const writer = writable.getWriter();
    const sink = new SseSink(
      interest,
      (chunk) => { this.delivered++; return writer.write(chunk); },
      (abort) => { (abort ? writer.abort('overflow') : writer.close()).catch(() => {}); },
      () => { this.sse.delete(client); },
    );
    const client = new SseClient(sink, caller, HOLD_AFTER);
    sink.raw('retry: 1000\n\n');
    const last = request.headers.get('last-event-id');
    if (last) this.replay(sink, last);
    else sink.raw(`id: ${this.epoch}-${this.seq}\nevent: status\ndata: ${JSON.stringify({ connected: this.connected })}\n\n`);
    // What came before is in the replay (or the status): the passes write it what comes after.
    client.sentSeq = this.seq;
    this.sse.add(client);
    return new Response(readable, {
      headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' },
    });
  }

  /** Sends what a reconnecting client missed, or `resync` when it is no longer held. */
  private replay(client: SseSink, lastEventId: string): void {
    const m = /^([0-9a-f]{8})-(\d+)$/.exec(lastEventId.trim());
    const oldest = this.ring[0]?.seq ?? this.seq + 1;
    if (!m || m[1] !== this.epoch || Number(m[2]) > this.seq || Number(m[2]) < oldest - 1) {
      client.raw(`id: ${this.epoch}-${this.seq}\nevent: resync\ndata: ${JSON.stringify({ message: 'the missed events are no longer held: read the current state again', connected: this.connected })}\n\n`);
      return;
    }
    const after = Number(m[2]);
    let text = '';
    for (const held of this.ring) if (held.seq > after && client.wantsEvent(held)) text += held.sse;
    if (text) client.raw(text);
  }

  // ---- SignalR hub -----------------------------------------------------------------------------------------------

  private acceptHub(family: Family, caller: StreamCaller): Response {
    const pair = new WebSocketPair();
    const [client, server] = [pair[0], pair[1]];
    const state: HubState = { family, handshaken: false, ticks: [], streams: {}, caller };
    const hubClient = this.hubClient(server, state);
    this.ctx.acceptWebSocket(server);
    hubClient.save();
    this.hubs.set(server, hubClient);
    hubClient.flow(); // from here on it is owed every event (sent once its handshake is done)
    // Closed unless its handshake comes within STREAM_HUB_HANDSHAKE_SECONDS (15 s by default, as the reference server).
    this.awaitingHandshake.set(server, Date.now() + configOf(this.env).STREAM_HUB_HANDSHAKE_SECONDS * 1000);
    this.handshakeTimer ??= setInterval(() => this.closeSilentHubs(), 1000);
    return new Response(null, { status: 101, webSocket: client });
  }

  /** Sockets past their handshake deadline are sent a Close message and closed; the sweep stops once none wait. */
  private closeSilentHubs(): void {
    const now = Date.now();
    for (const [ws, deadline] of this.awaitingHandshake) {
      if (this.gone.has(ws) || this.hubOf(ws).state.handshaken) this.awaitingHandshake.delete(ws);
      else if (now >= deadline) {
        this.awaitingHandshake.delete(ws);
        this.hubOf(ws).send(hub.close(`no handshake within ${configOf(this.env).STREAM_HUB_HANDSHAKE_SECONDS} s`));
        try { ws.close(1008, 'no handshake'); } catch { /* gone */ }
        this.forget(ws);
      }
    }
    if (this.awaitingHandshake.size === 0 && this.handshakeTimer !== undefined) {
      clearInterval(this.handshakeTimer);
      this.handshakeTimer = undefined;
    }
  }

  /** The socket's client, made again from its attachment if the object lost it. */
  private hubOf(ws: WebSocket): HubClient {
    let client = this.hubs.get(ws);
    if (!client) {
      client = this.hubClient(ws, savedHubState(ws));
      this.hubs.set(ws, client);
    }
    return client;
  }

  private hubClient(ws: WebSocket, state: HubState): HubClient {
    return new HubClient(ws, state, {
      seq: () => this.seq,
      sent: () => { this.delivered++; },
      forget: (socket) => this.forget(socket),
    });
  }

  private forget(ws: WebSocket): void {
    const client = this.hubs.get(ws);
    if (client) client.forgotten = true;
    this.hubs.delete(ws);
    this.hubQueues.delete(ws);
    this.gone.add(ws);
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    await this.restore();
    if (this.gone.has(ws)) return;
    // In order per socket: a message waits for the one before it (whose invocation may wait for its admission).
    const next = (this.hubQueues.get(ws) ?? Promise.resolve()).then(() => this.onHubText(ws, message));
    const settled = next.catch((error) => {
      console.error(JSON.stringify({ msg: 'hub message failed', error: String(error) }));
    });
    this.hubQueues.set(ws, settled);
    await settled;
  }

  private async onHubText(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    if (this.gone.has(ws)) return;
    const client = this.hubOf(ws);
    const s = client.state;
    const text = typeof message === 'string' ? message : new TextDecoder().decode(message);
    for (const record of hub.parseRecords(text)) {
      if (this.gone.has(ws)) return;
      if (!record) {
        client.send(hub.close('unreadable message'));
        ws.close(1003, 'unreadable message');
        return;
      }
      if (!s.handshaken) {
        if (record.protocol !== 'json' || record.version !== 1) {
          client.send(hub.frame({ error: `protocol ${String(record.protocol)} version ${String(record.version)} is not supported: use json version 1` }));
          ws.close(1002, 'unsupported protocol');
          return;
        }
        s.handshaken = true;
        client.save();
        client.send(hub.frame({}));
        client.send(hub.invocation('OnConnectionStatus', { connected: this.connected }));
        continue;
      }
      const m = record as unknown as hub.HubMessage;
      // Any message says the client is alive and reading: what a client without flow checks is judged by (fanout.ts).
      client.flow().heard();
      if (m.type === hub.MessageType.Invocation || m.type === hub.MessageType.StreamInvocation) {
        // An invocation is a call of the client's API budget, as a REST call is.
        const admission = await admit(this.env, 'api', s.caller.clientId);
        if (!admission.ok) {
          const error = apiRateMessage(this.env, admission.retryAfterSeconds);
          if (typeof m.invocationId === 'string') client.send(hub.completion(m.invocationId, { error }));
          continue;
        }
      }
      this.onHubMessage(client, m);
    }
  }

  private onHubMessage(client: HubClient, m: hub.HubMessage): void {
    const { ws, state: s } = client;
    const args = Array.isArray(m.arguments) ? m.arguments : [];
    const answer = (outcome: { result?: unknown; error?: string }) => {
      if (typeof m.invocationId === 'string') client.send(hub.completion(m.invocationId, outcome));
    };
    switch (m.type) {
      case hub.MessageType.Ping: return;
      case hub.MessageType.Completion:
        // The answer to a flow probe (any other completion from a client answers nothing the hub asked).
        if (m.invocationId !== undefined) client.flow().answered(m.invocationId);
        return;
      case hub.MessageType.Close:
        ws.close(1000, 'closed by the client');
        return;
      case hub.MessageType.CancelInvocation:
        if (typeof m.invocationId === 'string' && s.streams[m.invocationId]) {
          delete s.streams[m.invocationId];
          client.flow().cancelled(m.invocationId);
        }
        return;
      case hub.MessageType.Invocation: {
        const symbol = args[0];
        if (m.target === 'SubscribeToTicks' || m.target === 'UnsubscribeFromTicks') {
          if (typeof symbol !== 'string' || symbol === '') return answer({ error: `${m.target}: symbol must be a non-empty string` });
          if (symbol.length > MAX_HUB_NAME) return answer({ error: `${m.target}: symbol must be at most ${MAX_HUB_NAME} characters` });
          const subscribed = s.ticks.includes(symbol);
          if (m.target === 'SubscribeToTicks' && !subscribed && s.ticks.length >= MAX_HUB_TICK_SYMBOLS) {
            return answer({ error: `SubscribeToTicks: at most ${MAX_HUB_TICK_SYMBOLS} symbols per connection: unsubscribe one first, or stream every symbol with StreamTicks` });
          }
          s.ticks = s.ticks.filter((t) => t !== symbol);
          if (m.target === 'SubscribeToTicks') s.ticks.push(symbol);
          return answer({ result: null });
        }
        if (m.target === FLOW_CONTROL_METHOD) {
          // Flow checks only for a client that asks (and answers OnFlowCheck): a stock client is never sent one.
          client.flow().enableChecks();
          return answer({ result: true });
        }
        return answer({ error: `Unknown hub method '${String(m.target)}'` });
      }
      case hub.MessageType.StreamInvocation: {
        const id = m.invocationId;
        if (typeof id !== 'string') return;
        if (id.length > MAX_HUB_NAME) {
          client.send(hub.close(`invocationId: must be at most ${MAX_HUB_NAME} characters`));
          ws.close(1008, 'invocation id too long');
          this.forget(ws);
          return;
        }
        const topic = HUB_STREAMS[s.family][String(m.target)];
        if (!topic) return answer({ error: `Unknown hub stream '${String(m.target)}'` });
        if (!s.streams[id] && Object.keys(s.streams).length >= MAX_HUB_STREAMS) {
          return answer({ error: `${String(m.target)}: at most ${MAX_HUB_STREAMS} open streams per connection: cancel one first` });
        }
        const symbol = topic === 'ticks' && typeof args[0] === 'string' && args[0] !== '' && args[0].length <= MAX_HUB_NAME ? args[0] : undefined;
        s.streams[id] = symbol ? { topic, symbol } : { topic };
        return;
      }
      default:
        return answer({ error: `message type ${String(m.type)} is not supported` });
    }
  }

  override async webSocketClose(ws: WebSocket, code: number): Promise<void> {
    this.forget(ws);
    try { ws.close(code === 1005 ? 1000 : code, 'closed'); } catch { /* already */ }
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    this.forget(ws);
  }
}
