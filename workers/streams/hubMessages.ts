/**
 * What a SignalR hub socket's messages do (the JSON hub protocol: signalr.ts). The first record is the handshake,
 * which must ask for `json` version 1 and is answered with the stream's status; after it, every message says the
 * client is alive and reading, every invocation is a call of the client's API budget (as a REST call is), and the
 * hub's methods and streams are:
 *
 * - `SubscribeToTicks(symbol)` / `UnsubscribeFromTicks(symbol)`: ticks of that symbol as `OnTick` invocations, at most
 *   `MAX_HUB_TICK_SYMBOLS` symbols per socket;
 * - `EnableFlowControl()`: flow checks for the socket (fanout.ts, `HubFlow`);
 * - the family's server streams (`HUB_STREAMS`), at most `MAX_HUB_STREAMS` open per socket, cancelled by the client.
 *
 * Names (symbols, invocation ids) are at most `MAX_HUB_NAME` characters.
 */
import type { Family } from '../../shared/protocol.js';
import type { StreamTopic } from '../../shared/streams.js';
import { FLOW_CONTROL_METHOD } from './fanout.js';
import type { HubClient } from './clients.js';
import * as hub from './signalr.js';

/** Per hub socket: tick symbols subscribed with SubscribeToTicks, open server streams, and the length of each name. */
export const MAX_HUB_TICK_SYMBOLS = 256;
export const MAX_HUB_STREAMS = 64;
export const MAX_HUB_NAME = 64;

export const HUB_STREAMS: Record<Family, Record<string, StreamTopic>> = {
  PF4: {
    StreamTicks: 'ticks',
    StreamTrades: 'trades',
    StreamUserUpdates: 'users',
    StreamSymbolUpdates: 'symbols',
    StreamMarginCallUpdates: 'margin',
  },
  PF5: {
    StreamTicks: 'ticks',
    StreamPositions: 'positions',
    StreamOrders: 'orders',
    StreamDeals: 'deals',
    StreamUserUpdates: 'users',
    StreamMarginCallUpdates: 'margin',
  },
};

/** What handling a socket's messages needs of its stream object. */
export interface HubMessageHost {
  /** The stream's status, told to a socket once it handshakes. */
  connected(): boolean;
  /** Admits one invocation of the client's API budget: null when admitted, else the error to answer it with. */
  admit(clientId: string): Promise<string | null>;
  /** Whether the object let go of the socket. */
  gone(ws: WebSocket): boolean;
  /** The object lets go of the socket. */
  forget(ws: WebSocket): void;
}

/** One WebSocket message of the client's: its records, in order. */
export async function onHubText(client: HubClient, message: string | ArrayBuffer, host: HubMessageHost): Promise<void> {
  const { ws, state: s } = client;
  const text = typeof message === 'string' ? message : new TextDecoder().decode(message);
  for (const record of hub.parseRecords(text)) {
    if (host.gone(ws)) return;
    if (!record) {
      client.send(hub.close('unreadable message'));
      ws.close(1003, 'unreadable message');
      return;
    }
    if (!s.handshaken) {
      if (record.protocol !== 'json' || record.version !== 1) {
        client.send(
          hub.frame({
            error: `protocol ${String(record.protocol)} version ${String(record.version)} is not supported: use json version 1`,
          }),
        );
        ws.close(1002, 'unsupported protocol');
        return;
      }
      s.handshaken = true;
      client.save();
      client.send(hub.frame({}));
      client.send(hub.invocation('OnConnectionStatus', { connected: host.connected() }));
      continue;
    }
    const m = record as unknown as hub.HubMessage;
    // Any message says the client is alive and reading: what a client without flow checks is judged by (fanout.ts).
    client.flow().heard();
    if (m.type === hub.MessageType.Invocation || m.type === hub.MessageType.StreamInvocation) {
      const error = await host.admit(s.caller.clientId);
      if (error !== null) {
        if (typeof m.invocationId === 'string') client.send(hub.completion(m.invocationId, { error }));
        continue;
      }
    }
    onHubMessage(client, m, host);
  }
}

/** One message after the handshake, admitted. */
function onHubMessage(client: HubClient, m: hub.HubMessage, host: HubMessageHost): void {
  const { ws, state: s } = client;
  const args = Array.isArray(m.arguments) ? m.arguments : [];
  const answer = (outcome: { result?: unknown; error?: string }) => {
    if (typeof m.invocationId === 'string') client.send(hub.completion(m.invocationId, outcome));
  };
  switch (m.type) {
    case hub.MessageType.Ping:
      return;
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
        if (typeof symbol !== 'string' || symbol === '')
          return answer({ error: `${m.target}: symbol must be a non-empty string` });
        if (symbol.length > MAX_HUB_NAME)
          return answer({ error: `${m.target}: symbol must be at most ${MAX_HUB_NAME} characters` });
        const subscribed = s.ticks.includes(symbol);
        if (m.target === 'SubscribeToTicks' && !subscribed && s.ticks.length >= MAX_HUB_TICK_SYMBOLS) {
          return answer({
            error: `SubscribeToTicks: at most ${MAX_HUB_TICK_SYMBOLS} symbols per connection: unsubscribe one first, or stream every symbol with StreamTicks`,
          });
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
        host.forget(ws);
        return;
      }
      const topic = HUB_STREAMS[s.family][String(m.target)];
      if (!topic) return answer({ error: `Unknown hub stream '${String(m.target)}'` });
      if (!s.streams[id] && Object.keys(s.streams).length >= MAX_HUB_STREAMS) {
        return answer({
          error: `${String(m.target)}: at most ${MAX_HUB_STREAMS} open streams per connection: cancel one first`,
        });
      }
      const symbol =
        topic === 'ticks' && typeof args[0] === 'string' && args[0] !== '' && args[0].length <= MAX_HUB_NAME
          ? args[0]
          : undefined;
      s.streams[id] = symbol ? { topic, symbol } : { topic };
      return;
    }
    default:
      return answer({ error: `message type ${String(m.type)} is not supported` });
  }
}
