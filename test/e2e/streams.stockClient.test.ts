/**
 * The hub as a stock @microsoft/signalr client meets it, with a logger recording every line it logs at any level
 * (simulator, broker, edge in workerd); none may be a warning or an error, the levels its default console logger shows. A
 * live-prices session (OnConnectionStatus, SubscribeToTicks of five symbols and OnTick, StreamTrades with a trade
 * opened through the API) logs no warning and no error: a client that did not ask for flow checks is never sent an
 * invocation it has no handler for, and its stream object judges it by its keep-alive instead (never found slow while
 * it reads). The session lasts a few seconds past the trade: a dozen flow-check periods (PROBE_MS, 250 ms) and, with
 * REGISTRY_CACHE_SECONDS at 1 s here, several of the object's standing re-checks of its clients. A client that asks for flow checks (EnableFlowControl, with an OnFlowCheck handler) is sent them and
 * answers them, still without a warning.
 */
import { HubConnectionBuilder, LogLevel, type HubConnection, type ILogger } from '@microsoft/signalr';
import { afterEach, describe, expect, it } from 'vitest';
import { openTrade } from './v2/api.js';
import { eventually, stackForFile } from './support.js';
import { objectCall } from '../../launcher/edge.js';
import { streamObjectName } from '../../workers/streams/fanout.js';
import { LOCAL_HOME } from '../support/edge.js';

// The standing re-check (every REGISTRY_CACHE_SECONDS, 5 s by default) runs several times within the session; quotes
// of one symbol come about four times a second (a tenth of that by default).
const setup = stackForFile({ ticksPerSecond: 50, edgeVars: { REGISTRY_CACHE_SECONDS: '1' } });
const SYMBOLS = ['EURUSD', 'GBPUSD', 'USDJPY', 'AUDUSD', 'USDCHF'];
const open: HubConnection[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.stop().catch(() => {})));
});

/** Every line a client logs, as [level name, message]. */
type Lines = Array<[string, string]>;

/**
 * A stock client as its documentation builds it (an access token, nothing else configured) with a logger that records
 * every line at every level. The client's default console logger writes Information and above; Warning and above are
 * what a stock client's console must never show.
 */
function stockHub(lines: Lines): HubConnection {
  const c = setup.client;
  const logger: ILogger = {
    log: (level, message) => {
      lines.push([LogLevel[level], message]);
    },
  };
  const connection = new HubConnectionBuilder()
    .withUrl(`${c.stack.edgeUrl}/hubs/pf4/v2?tradePlatform=${c.stack.platforms.pf4}`, {
      accessTokenFactory: () => c.token,
    })
    .configureLogging(logger)
    .build();
  open.push(connection);
  return connection;
}

const complaints = (lines: Lines) => lines.filter(([level]) => !['Trace', 'Debug', 'Information'].includes(level));

/** The platform's stream object's figures, read through Miniflare. */
async function streamStats(): Promise<{ hubs: number; slowHubs: number }> {
  const c = setup.client;
  return objectCall(
    c.stack.edge.miniflare,
    'STREAMS',
    streamObjectName(c.stack.platforms.pf4, LOCAL_HOME.region, 0),
    'stats',
  );
}

describe('a stock SignalR client at its default log level', () => {
  it('logs no warning or error through a live-prices session with a trade stream', async () => {
    const statuses: boolean[] = [];
    const ticks: Array<{ symbol: string; bid: number; ask: number }> = [];
    const trades: Array<Record<string, unknown>> = [];
    let order = 0;
    let slowSeen = 0;
    const lines: Lines = [];
    {
      const connection = stockHub(lines);
      connection.on('OnConnectionStatus', (s: { connected: boolean }) => {
        statuses.push(s.connected);
      });
      connection.on('OnTick', (t: { symbol: string; bid: number; ask: number }) => {
        ticks.push(t);
      });
      await connection.start();
      for (const symbol of SYMBOLS) await connection.invoke('SubscribeToTicks', symbol);
      connection.stream('StreamTrades').subscribe({
        next: (t: Record<string, unknown>) => {
          trades.push(t);
        },
        error: () => {},
        complete: () => {},
      });
      ({ order } = await openTrade(setup.client, 'stock client'));
      await eventually(() => Promise.resolve(trades.some((t) => t.order === order)), 10_000);
      // The rest of the session, the stream object asked along the way whether it finds the socket slow. The
      // session's length is what is tested (a stock client keeps its socket alive itself: 3 s span a dozen flow-check
      // periods and three standing re-checks): sampled each half second.
      const until = Date.now() + 3_000;
      while (Date.now() < until) {
        slowSeen += (await streamStats()).slowHubs;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      await connection.stop();
    }

    expect(complaints(lines)).toEqual([]);
    // The logger was heard: the client's own lines of the session are there, from its start to its stop.
    expect(
      lines.filter(([level, m]) => level === 'Information' && m.startsWith('WebSocket connected to ws://')),
    ).toHaveLength(1);
    expect(lines.some(([, m]) => m === "Using HubProtocol 'json'.")).toBe(true);
    expect(lines.some(([, m]) => m === 'HubConnection connected successfully.')).toBe(true);
    expect(statuses.at(-1)).toBe(true);
    expect(ticks.length).toBeGreaterThanOrEqual(5);
    expect(ticks.every((t) => SYMBOLS.includes(t.symbol) && t.ask > t.bid)).toBe(true);
    expect(trades.find((t) => t.order === order)).toMatchObject({
      kind: 'Added',
      order,
      symbol: 'EURUSD',
      cmd: 'Buy',
      comment: 'stock client',
    });
    expect(slowSeen).toBe(0);
  }, 30_000);

  it('is sent flow checks once it asks for them, answers them from its handler, and logs no warning', async () => {
    let checks = 0;
    const ticks: unknown[] = [];
    const lines: Lines = [];
    {
      const connection = stockHub(lines);
      connection.on('OnConnectionStatus', () => {});
      connection.on('OnTick', (t) => {
        ticks.push(t);
      });
      connection.on('OnFlowCheck', () => {
        checks++;
        return true;
      });
      await connection.start();
      expect(await connection.invoke('EnableFlowControl')).toBe(true);
      await connection.invoke('SubscribeToTicks', 'EURUSD');
      await eventually(() => Promise.resolve(checks >= 2 && ticks.length >= 2), 10_000);
      await connection.stop();
    }
    expect(complaints(lines)).toEqual([]);
    expect(checks).toBeGreaterThanOrEqual(2);
  }, 20_000);
});
