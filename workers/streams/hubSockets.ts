/**
 * A stream object's SignalR hub sockets, accepted with the WebSocket Hibernation API (an idle hub client costs no CPU
 * between events). Each socket has its `HubClient`, made again from the socket's attachment when the object lost it;
 * its messages are handled in order (an invocation waits for its admission: hubMessages.ts); a socket that does not
 * handshake within STREAM_HUB_HANDSHAKE_SECONDS is sent a Close message and closed. A socket let go (closed, ended or
 * refused) is not handled again, and no client is made for it again.
 */
import type { Family } from '../../shared/protocol.js';
import { HubClient, savedHubState, type HubState } from './clients.js';
import { onHubText, type HubMessageHost } from './hubMessages.js';
import * as hub from './signalr.js';
import type { StreamCaller } from './standing.js';

/** What the hub sockets need of their stream object. */
export interface HubSocketsHost extends Omit<HubMessageHost, 'gone' | 'forget'> {
  /** The object's state: it accepts the sockets and lists them (also after a wake from hibernation). */
  readonly ctx: Pick<DurableObjectState, 'acceptWebSocket' | 'getWebSockets'>;
  /** STREAM_HUB_HANDSHAKE_SECONDS. */
  handshakeSeconds(): number;
  /** The object's newest event: a socket accepted now is owed what comes after it. */
  seq(): number;
  /** A message went out (for the object's counters). */
  sent(): void;
}

export class HubSockets {
  private readonly hubs = new Map<WebSocket, HubClient>();
  /** Sockets let go (closed, ended or refused): not handled again, and no client made for them again. */
  private readonly gone = new WeakSet<WebSocket>();
  /** Per socket, its messages handled in order (an invocation waits for its admission). */
  private readonly queues = new Map<WebSocket, Promise<void>>();
  /** Sockets accepted and not yet handshaken, with their deadline (epoch ms). */
  private readonly awaitingHandshake = new Map<WebSocket, number>();
  private handshakeTimer: ReturnType<typeof setInterval> | undefined;
  private readonly messages: HubMessageHost;

  constructor(private readonly host: HubSocketsHost) {
    this.messages = {
      connected: () => host.connected(),
      admit: (clientId) => host.admit(clientId),
      gone: (ws) => this.gone.has(ws),
      forget: (ws) => this.forget(ws),
    };
  }

  /** Sockets the object holds, let go or not, until their close arrives. */
  get count(): number {
    return this.host.ctx.getWebSockets().length;
  }

  /** The sockets not let go, in the object's order. */
  clients(): HubClient[] {
    return this.host.ctx
      .getWebSockets()
      .filter((ws) => !this.gone.has(ws))
      .map((ws) => this.hubOf(ws));
  }

  /** Of the clients in memory: how many have a flow, and how many of those are slow. */
  stats(): { flows: number; slowHubs: number } {
    let flows = 0;
    let slowHubs = 0;
    for (const c of this.hubs.values()) {
      if (c.flowing) flows++;
      if (c.slow) slowHubs++;
    }
    return { flows, slowHubs };
  }

  /** A new hub socket for `caller`: the 101 answer that hands the client its end. */
  accept(family: Family, caller: StreamCaller): Response {
    const pair = new WebSocketPair();
    const [client, server] = [pair[0], pair[1]];
    const state: HubState = { family, handshaken: false, ticks: [], streams: {}, caller };
    const hubClient = this.hubClient(server, state);
    this.host.ctx.acceptWebSocket(server);
    hubClient.save();
    this.hubs.set(server, hubClient);
    hubClient.flow(); // from here on it is owed every event (sent once its handshake is done)
    // Closed unless its handshake comes within STREAM_HUB_HANDSHAKE_SECONDS (15 s by default, as the reference server).
    this.awaitingHandshake.set(server, Date.now() + this.host.handshakeSeconds() * 1000);
    this.handshakeTimer ??= setInterval(() => this.closeSilent(), 1000);
    return new Response(null, { status: 101, webSocket: client });
  }

  /** A message of the socket's, handled after the ones before it (whose invocation may wait for its admission). */
  async message(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    if (this.gone.has(ws)) return;
    const next = (this.queues.get(ws) ?? Promise.resolve()).then(() => {
      if (this.gone.has(ws)) return;
      return onHubText(this.hubOf(ws), message, this.messages);
    });
    const settled = next.catch((error) => {
      console.error(JSON.stringify({ msg: 'hub message failed', error: String(error) }));
    });
    this.queues.set(ws, settled);
    await settled;
  }

  /** The object lets go of the socket: it is handled no more. */
  forget(ws: WebSocket): void {
    const client = this.hubs.get(ws);
    if (client) client.forgotten = true;
    this.hubs.delete(ws);
    this.queues.delete(ws);
    this.gone.add(ws);
  }

  /** Sockets past their handshake deadline are sent a Close message and closed; the sweep stops once none wait. */
  private closeSilent(): void {
    const now = Date.now();
    for (const [ws, deadline] of this.awaitingHandshake) {
      if (this.gone.has(ws) || this.hubOf(ws).state.handshaken) this.awaitingHandshake.delete(ws);
      else if (now >= deadline) {
        this.awaitingHandshake.delete(ws);
        this.hubOf(ws).send(hub.close(`no handshake within ${this.host.handshakeSeconds()} s`));
        try {
          ws.close(1008, 'no handshake');
        } catch {
          /* gone */
        }
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
      seq: () => this.host.seq(),
      sent: () => this.host.sent(),
      forget: (socket) => this.forget(socket),
    });
  }
}
