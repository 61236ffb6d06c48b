/**
 * A platform's live streams for the terminal: the SignalR hub (`@microsoft/signalr`'s browser bundle, loaded by
 * index.html as the global `signalR`), or Server-Sent Events read with `fetch` (a browser `EventSource` cannot send
 * the token). Either way the terminal is told the same things: ticks, trade / position, account and margin changes,
 * the platform's connection state, and `resync` whenever events may have been missed (the gateway said so, or the
 * terminal's own connection was lost and came back): then it reads the account again.
 *
 * States: `connecting`, `live` (connected, the platform's manager session up), `platform-down` (connected, the
 * gateway reports the platform disconnected), `reconnecting` (the terminal's connection was lost; it retries every
 * second by itself), `off`. A stream the gateway has only just opened says the platform is not up until it has heard
 * from the platform's broker, a moment later on a healthy connect: so after a (re)connect the terminal stays
 * `connecting` on that word for up to PLATFORM_WAIT_MS, and shows `platform-down` only if the platform is still not
 * up then, or once it was live.
 */

/** What each family streams beyond ticks: hub stream names and SSE topics. */
const TOPICS = {
  PF4: {
    hub: { StreamTrades: 'trade', StreamUserUpdates: 'user', StreamMarginCallUpdates: 'margin' },
    sse: ['trades', 'users', 'margin'],
  },
  PF5: {
    hub: { StreamPositions: 'position', StreamUserUpdates: 'user', StreamMarginCallUpdates: 'margin' },
    sse: ['positions', 'users', 'margin'],
  },
};
const SSE_EVENT = { ticks: 'tick', trades: 'trade', positions: 'position', users: 'user', margin: 'margin' };
const RETRY_MS = 1000;
const PLATFORM_WAIT_MS = 5000;

/**
 * Opens the stream of `platform` (`{id, type}`) and calls `on.state(state, detail)`, `on.tick(t)`, `on.trade(t)`,
 * `on.position(p)`, `on.user(u)`, `on.margin(m)`, `on.resync(message)`. `transport` `hub` falls back to SSE when the
 * hub cannot be reached. Answers `{close()}`.
 */
export function openStream(gateway, platform, transport, on) {
  let current = null;
  let closed = false;
  on = { ...on, state: untilPlatformHeard(on.state) };
  const start = async (kind) => {
    current = kind === 'hub' ? hubStream(gateway, platform, on) : sseStream(gateway, platform, on);
    try {
      await current.started;
    } catch (error) {
      if (closed || kind !== 'hub') return;
      on.state('connecting', `SignalR failed (${error.message}); using Server-Sent Events`);
      start('sse');
    }
  };
  on.state('connecting', transport === 'hub' ? 'SignalR' : 'SSE');
  start(transport);
  return {
    close() {
      closed = true;
      current?.close();
      on.state('off', '');
    },
  };
}

/**
 * Passes states on to `show`, but for a `platform-down` right after a (re)connect: that one is held as `connecting`
 * until the platform is live (dropped) or PLATFORM_WAIT_MS have passed (shown then).
 */
function untilPlatformHeard(show) {
  let heard = false;
  let waiting = null;
  const stopWaiting = () => {
    clearTimeout(waiting);
    waiting = null;
  };
  return (state, detail) => {
    if (state === 'platform-down' && !heard) {
      if (waiting === null) {
        waiting = setTimeout(() => {
          waiting = null;
          heard = true;
          show('platform-down', detail);
        }, PLATFORM_WAIT_MS);
      }
      return;
    }
    stopWaiting();
    heard = state === 'live' || state === 'platform-down';
    show(state, detail);
  };
}

function hubStream(gateway, platform, on) {
  const family = platform.type;
  const connection = new signalR.HubConnectionBuilder()
    .withUrl(`${gateway.base}/hubs/${family.toLowerCase()}/v2?tradePlatform=${platform.id}`, {
      accessTokenFactory: () => gateway.token,
      // The token is the credential: no cookies, so the gateway's CORS answer (no credentials mode) lets the call through.
      withCredentials: false,
    })
    .withAutomaticReconnect({ nextRetryDelayInMilliseconds: () => RETRY_MS })
    .configureLogging(signalR.LogLevel.Warning)
    .build();
  let platformUp = null;
  let subscriptions = [];
  // The hub says how the platform stands right after the handshake (OnConnectionStatus), and on every change.
  const show = () => on.state(platformUp === null ? 'connecting' : platformUp ? 'live' : 'platform-down', 'SignalR');
  connection.on('OnConnectionStatus', (s) => {
    platformUp = s.connected;
    show();
  });
  connection.on('OnResync', (r) => on.resync(r.message));
  // Server streams end with the connection: each (re)connection opens them again.
  const subscribe = () => {
    subscriptions.forEach((s) => s.dispose());
    subscriptions = [['StreamTicks', 'tick'], ...Object.entries(TOPICS[family].hub)].map(([name, what]) =>
      connection.stream(name).subscribe({ next: (item) => on[what](item), error: () => {}, complete: () => {} }),
    );
  };
  connection.onreconnecting(() => on.state('reconnecting', 'SignalR connection lost; reconnecting'));
  connection.onreconnected(() => {
    subscribe();
    show();
    on.resync('the terminal reconnected: events may have been missed');
  });
  // Gave up (it never does with this retry policy) or stopped: start afresh after a second.
  let stopped = false;
  connection.onclose(() => {
    if (stopped) return;
    on.state('reconnecting', 'SignalR connection closed');
    setTimeout(() => {
      if (!stopped)
        connection.start().then(
          () => {
            subscribe();
            show();
            on.resync('the terminal reconnected');
          },
          () => {},
        );
    }, RETRY_MS);
  });
  const started = connection.start().then(() => {
    subscribe();
    show();
  });
  return {
    started,
    close() {
      stopped = true;
      connection.stop();
    },
  };
}

function sseStream(gateway, platform, on) {
  const family = platform.type;
  let lastEventId = null;
  let stopped = false;
  let abort = new AbortController();
  const path = `/api/v2/${family}/${platform.id}/Stream`;

  /** Reads one response to its end, dispatching each event (`event:`, `id:`, `data:` lines, a blank line ends one). */
  const read = async () => {
    const url = new URL(`${gateway.base}${path}?ticks&${TOPICS[family].sse.join('&')}`);
    if (lastEventId) url.searchParams.set('lastEventId', lastEventId);
    const answer = await fetch(url, { headers: { authorization: `Bearer ${gateway.token}` }, signal: abort.signal });
    if (!answer.ok || !answer.headers.get('content-type')?.startsWith('text/event-stream')) {
      const body = await answer.json().catch(() => null);
      throw new Error(body?.error ? `${body.error.code}: ${body.error.message}` : `HTTP ${answer.status}`);
    }
    const reader = answer.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += value;
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let name = 'message';
        const data = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) name = line.slice(6).trim();
          else if (line.startsWith('id:')) lastEventId = line.slice(3).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        }
        if (data.length > 0) dispatch(name, JSON.parse(data.join('\n')));
      }
    }
  };
  const dispatch = (name, data) => {
    if (name === 'status') on.state(data.connected ? 'live' : 'platform-down', 'SSE');
    else if (name === 'resync') on.resync(data.message);
    else if (name === 'closed' || name === 'overflow')
      on.state('reconnecting', `${data.code ?? name}: ${data.message ?? ''}`);
    else if (SSE_EVENT[name]) on[SSE_EVENT[name]](data);
  };
  const started = read();
  // Whenever a response ends or fails: read again after a second, from the last event id seen.
  started
    .catch((error) => {
      if (!stopped) on.state('reconnecting', `SSE: ${error.message}`);
    })
    .then(async () => {
      while (!stopped) {
        on.state('reconnecting', 'SSE stream ended; reconnecting');
        await new Promise((done) => setTimeout(done, RETRY_MS));
        if (stopped) return;
        await read().catch(() => {});
      }
    });
  return {
    started,
    close() {
      stopped = true;
      abort.abort();
    },
  };
}
