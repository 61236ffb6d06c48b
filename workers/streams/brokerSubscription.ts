/**
 * A stream object's one subscription to the broker (`#subscribe`, `shared/frames.ts`), held on the first healthy
 * broker of the platform's ordered list (`StreamBrokers`). With more than one broker the one in use is pinged on the
 * subscription's socket every `LINK_PING_EVERY_MS`; a ping unanswered within `LINK_PING_TIMEOUT_MS` (a hung broker),
 * a socket lost, an upgrade failing, a subscription refused or a drain notice moves the subscription to the next
 * broker of the list, which is told why (`#failover`); a broker left is tried again after a backoff, and a broker
 * alone is reconnected to after it. A draining broker's events keep coming until the next broker accepted the
 * subscription; any other loss is pushed to clients at once as a status `{connected: false}`. Two brokers' event
 * streams are independent, and a broker's events while nobody subscribed are gone: every subscription that follows a
 * lost or left one begins with a `resync` event, then the new broker's status tells the clients the stream is whole
 * again.
 */
import {
  FAILOVER_OP,
  LINK_PATH,
  LINK_PING_EVERY_MS,
  LINK_PING_TIMEOUT_MS,
  PING_OP,
  SUBSCRIBE_OP,
  type DrainFrame,
  type FailoverArgs,
  type FailoverReason,
  type PingReport,
  type StreamBatchFrame,
  type StreamFrame,
  type StreamSnapshotFrame,
} from '../../shared/frames.js';
import { topicsOf, type StreamEvent } from '../../shared/streams.js';
import { parseJson } from '../../shared/losslessJson.js';
import type { RingEvent } from './fanout.js';
import { RESYNC_MESSAGE } from './eventRing.js';
import { StreamBrokers } from './streamBrokers.js';
import type { StreamConfig } from './streamRequest.js';

/** With another broker to go to, opening a leg gives up after this (a stopped broker accepts and never answers). */
export const PAIRED_CONNECT_TIMEOUT_MS = 1500;
/** The subscription's frame id on every leg. */
const SUBSCRIPTION_ID = 1;

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

/** What the subscription needs of its stream object. */
export interface SubscriptionHost {
  /** The platform, once the object was told it. */
  config(): StreamConfig | undefined;
  /** The broker's shared secret (BROKER_SECRET). */
  secret(): string;
  /** Whether anybody listens: a broker left is tried again only then. */
  hasClients(): boolean;
  /** An event of the platform's stream (the broker's, or a resync notice). */
  publish(event: RingEvent): void;
  /** The clients are told the platform's stream is down (once). */
  disconnected(): void;
  /**
   * A part of the platform's records as they stand (`SubscribeArgs.snapshot`), after every subscription and every
   * return of the manager session; a host that has it asks for snapshots. Events published after the last part are
   * the changes after it.
   */
  snapshot?(events: StreamEvent[], last: boolean): void;
}

export class BrokerSubscription {
  /** The platform's brokers, the leg to the one in use, and a draining broker's leg kept until the next subscribes. */
  private brokers: StreamBrokers | undefined;
  private leg: Leg | undefined;
  private outgoing: Leg | undefined;
  private connecting = false;
  private retry: ReturnType<typeof setTimeout> | undefined;
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  /** A subscription was lost or left: the next one accepted begins with a resync notice. */
  private gap = false;
  /** Why the last broker was left, told to the next one when its leg opens. */
  private moveReason: FailoverReason | undefined;

  constructor(private readonly host: SubscriptionHost) {}

  /** The broker in use, whether it accepted the subscription, and the moves so far (for the object's counters). */
  stats(): { broker: string | null; subscribed: boolean; failovers: Partial<Record<FailoverReason, number>> } {
    return {
      broker: this.leg?.url ?? null,
      subscribed: this.leg?.subscribed ?? false,
      failovers: { ...this.brokers?.failovers },
    };
  }

  /** The platform's list of brokers; one that differs from the list in use (the registry moved it) starts afresh. */
  use(urls: string[]): void {
    if (urls.length === 0 || this.brokers?.key === StreamBrokers.key(urls)) return;
    if (this.brokers) this.closeLegs('platform moved');
    this.moveReason = undefined;
    this.brokers = new StreamBrokers(urls);
  }

  /** Opens a leg to the broker in use unless one is open or opening, or that broker is still waiting out its backoff. */
  ensure(): void {
    const config = this.host.config();
    const brokers = this.brokers;
    if (this.leg || this.connecting || this.retry || !config || !brokers) return;
    const wait = brokers.waitMs();
    if (wait > 0) {
      this.retry = setTimeout(() => {
        this.retry = undefined;
        if (this.host.hasClients()) this.ensure();
      }, wait);
      return;
    }
    this.connecting = true;
    void this.connect(config, brokers, brokers.current).finally(() => {
      this.connecting = false;
      // Left while opening (unreachable, refused): the next broker, or this one after its backoff.
      if (this.host.hasClients()) this.ensure();
    });
  }

  /**
   * Nobody listens: every leg is closed. Answers whether a subscription was lost or left since the last one was
   * accepted (the object's events since are unseen), and owes the next subscription no resync for it.
   */
  stop(why: string): boolean {
    this.closeLegs(why);
    const gap = this.gap;
    this.gap = false;
    return gap;
  }

  private async connect(config: StreamConfig, brokers: StreamBrokers, index: number): Promise<void> {
    const brokerUrl = brokers.urls[index];
    try {
      const url = new URL(LINK_PATH, brokerUrl.endsWith('/') ? brokerUrl : `${brokerUrl}/`);
      const upgrade = fetch(url.toString(), {
        headers: { Upgrade: 'websocket', Authorization: `Bearer ${this.host.secret()}` },
      });
      // A stopped broker's kernel still accepts the connection: with another broker to go to, the upgrade is bounded.
      let timer: ReturnType<typeof setTimeout> | undefined;
      let late = false;
      const res = brokers.paired
        ? await Promise.race([
            upgrade,
            new Promise<never>((_, reject) => {
              timer = setTimeout(() => {
                late = true;
                reject(new Error(`no upgrade within ${PAIRED_CONNECT_TIMEOUT_MS} ms`));
              }, PAIRED_CONNECT_TIMEOUT_MS);
            }),
          ]).finally(() => clearTimeout(timer))
        : await upgrade;
      // An upgrade that comes after its time is let go.
      void upgrade.then(
        (r) => {
          if (!late || !r.webSocket) return;
          try {
            r.webSocket.accept();
            r.webSocket.close(1000, 'too late');
          } catch {
            /* gone */
          }
        },
        () => {
          /* failed: nothing to let go */
        },
      );
      const ws = res.webSocket;
      if (!ws) throw new Error(`link refused with HTTP ${res.status}`);
      ws.accept();
      if (this.brokers !== brokers) {
        // The platform's list changed while this one opened.
        try {
          ws.close(1000, 'platform moved');
        } catch {
          /* gone */
        }
        return;
      }
      const leg: Leg = { ws, index, url: brokerUrl, subscribed: false, nextId: 2, ping: undefined };
      this.leg = leg;
      ws.addEventListener('message', (ev) => {
        const data = ev.data as string | ArrayBuffer;
        this.onFrame(ws, typeof data === 'string' ? data : new TextDecoder().decode(data));
      });
      ws.addEventListener('close', () => this.onLost(ws));
      ws.addEventListener('error', () => this.onLost(ws));
      if (this.moveReason) {
        // The broker moved to is told why (it counts it); the notice's answer is not waited for.
        const args: FailoverArgs = { reason: this.moveReason, kind: 'stream' };
        this.moveReason = undefined;
        ws.send(
          JSON.stringify({ id: leg.nextId++, platform: config.platform, op: FAILOVER_OP, args, timeoutMs: 5000 }),
        );
      }
      ws.send(
        JSON.stringify({
          id: SUBSCRIPTION_ID,
          platform: config.platform,
          op: SUBSCRIBE_OP,
          args: {
            topics: config.topics ?? topicsOf(config.family),
            batch: true,
            ...(this.host.snapshot ? { snapshot: true } : {}),
          },
          timeoutMs: 10_000,
        }),
      );
      this.startHeartbeat();
    } catch (err) {
      console.warn(
        JSON.stringify({
          msg: 'stream link to the broker failed',
          platform: config.platform,
          broker: brokerUrl,
          error: String(err),
        }),
      );
      if (this.brokers === brokers && !this.leg) this.leave('unreachable');
    }
  }

  private onFrame(ws: WebSocket, text: string): void {
    const leg = ws === this.leg?.ws ? this.leg : ws === this.outgoing?.ws ? this.outgoing : undefined;
    if (!leg) return;
    let frame: Partial<StreamFrame> &
      Partial<Pick<StreamBatchFrame, 'events'>> &
      Partial<Pick<StreamSnapshotFrame, 'snapshot'>> &
      Partial<DrainFrame> & {
        id?: number;
        ok?: boolean;
        data?: unknown;
        error?: { message?: string };
        notTaken?: true;
      };
    // Lossless: PF5 ids beyond 2^53 − 1 in events stay exact bigints (written back as digits by `Encoded`).
    try {
      frame = parseJson(text) as typeof frame;
    } catch {
      return;
    }
    if (typeof frame.drain === 'object' && frame.drain !== null) {
      if (leg === this.leg) this.drain(leg);
      return;
    }
    if (frame.id === SUBSCRIPTION_ID) {
      if (leg !== this.leg) return;
      if (frame.ok === false) {
        console.warn(
          JSON.stringify({ msg: 'stream subscription refused', broker: leg.url, error: frame.error?.message }),
        );
        this.leave(frame.notTaken ? 'draining' : 'unreachable');
      } else {
        this.onSubscribed(leg);
      }
      return;
    }
    if (typeof frame.id === 'number') {
      if (leg.ping?.id !== frame.id) return;
      leg.ping = undefined;
      const report = frame.ok ? (frame.data as Partial<PingReport> | null) : null;
      // A broker from before heartbeats answers the ping with an error: it is alive all the same.
      if (report && (report.draining === true || report.platform === 'absent')) this.drain(leg);
      return;
    }
    if (typeof frame.sub !== 'number') return;
    // A batched frame is one turn of the broker's events; a broker that does not batch sends one event a frame.
    if (Array.isArray(frame.events)) for (const event of frame.events) this.host.publish(event);
    else if (frame.event) this.host.publish(frame.event);
    else if (frame.snapshot && Array.isArray(frame.snapshot.events))
      this.host.snapshot?.(frame.snapshot.events, frame.snapshot.last === true);
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
      try {
        old.ws.close(1000, 'moved to the next broker');
      } catch {
        /* gone */
      }
    }
    if (this.gap) {
      this.gap = false;
      this.host.disconnected();
      this.host.publish({ topic: 'resync', data: { message: RESYNC_MESSAGE } });
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
    if (!this.outgoing?.subscribed) this.host.disconnected();
    if (brokers.leave(leg?.index ?? brokers.current, reason)) this.moveReason = reason;
    this.ensure();
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
    this.ensure();
  }

  private closeLeg(leg: Leg, why: string): void {
    if (leg.subscribed) this.gap = true;
    try {
      leg.ws.close(1000, why);
    } catch {
      /* gone */
    }
  }

  private onLost(ws: WebSocket): void {
    if (ws === this.outgoing?.ws) {
      // The draining broker went before the next one took the subscription.
      this.outgoing = undefined;
      if (!this.leg?.subscribed) this.host.disconnected();
      return;
    }
    if (ws !== this.leg?.ws) return;
    this.leave('lost');
  }

  /** With more than one broker, the one in use is pinged on its leg; a ping unanswered in time is a hung broker. */
  private startHeartbeat(): void {
    if (!this.brokers?.paired || this.heartbeat !== undefined) return;
    this.heartbeat = setInterval(() => this.beat(), LINK_PING_EVERY_MS);
  }

  private beat(): void {
    const leg = this.leg;
    const config = this.host.config();
    if (!leg || !config || !this.brokers?.paired) {
      // Nothing open (or one broker left in the list): the heartbeat starts again with the next leg of a pair.
      clearInterval(this.heartbeat);
      this.heartbeat = undefined;
      return;
    }
    const now = Date.now();
    if (leg.ping) {
      if (now - leg.ping.at >= LINK_PING_TIMEOUT_MS) {
        console.warn(
          JSON.stringify({
            msg: 'stream broker hung: no answer to a ping',
            platform: config.platform,
            broker: leg.url,
          }),
        );
        this.leave('hung');
      }
      return;
    }
    leg.ping = { id: leg.nextId++, at: now };
    try {
      leg.ws.send(
        JSON.stringify({
          id: leg.ping.id,
          platform: config.platform,
          op: PING_OP,
          args: {},
          timeoutMs: LINK_PING_TIMEOUT_MS,
        }),
      );
    } catch {
      /* closing: its close event follows */
    }
  }

  /** Every leg is closed (no clients, or the platform's list changed). */
  private closeLegs(why: string): void {
    for (const leg of [this.leg, this.outgoing]) if (leg) this.closeLeg(leg, why);
    this.leg = undefined;
    this.outgoing = undefined;
    if (this.retry !== undefined) clearTimeout(this.retry);
    this.retry = undefined;
    this.host.disconnected();
  }
}
