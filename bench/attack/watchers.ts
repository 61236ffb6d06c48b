/**
 * Stream clients of the attack drill that note when everything arrived: an SSE stream (`SseWatch`) and a raw SignalR
 * JSON-protocol socket on a platform's hub (`HubWatch`), answering the hub's flow probes as a client library does.
 * What arrived is kept with its time, for the drill to measure how long after a cause a stream ended.
 */
import WebSocket from 'ws';
import { until } from './waiting.js';

export interface Timed<T> {
  at: number;
  value: T;
}

export interface SseEvent {
  event: string;
  data: string;
}

/** Server-Sent Events from text as it comes: `event` and `data` fields; other fields and comments are passed over. */
export class SseParser {
  private buffer = '';
  private event = 'message';
  private data: string[] = [];

  /** The events the text completes. */
  push(text: string): SseEvent[] {
    const complete: SseEvent[] = [];
    this.buffer += text;
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, nl).replace(/\r$/, '');
      this.buffer = this.buffer.slice(nl + 1);
      if (line === '') {
        if (this.data.length) complete.push({ event: this.event, data: this.data.join('\n') });
        this.event = 'message';
        this.data = [];
      } else if (line.startsWith('event:')) this.event = line.slice(6).trim();
      else if (line.startsWith('data:')) this.data.push(line.slice(5).replace(/^ /, ''));
    }
    return complete;
  }
}

/** The stream's `closed` event, the one the edge sends before it ends a stream. */
export function closedEventOf(events: ReadonlyArray<Timed<SseEvent>>): Timed<SseEvent> | undefined {
  return events.find((e) => e.value.event === 'closed');
}

export class SseWatch {
  readonly events: Array<Timed<SseEvent>> = [];
  status = 0;
  endedAt: number | null = null;
  private readonly abort = new AbortController();

  static async open(url: string, token: string): Promise<SseWatch> {
    const watch = new SseWatch();
    const res = await fetch(url, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
      signal: watch.abort.signal,
    });
    watch.status = res.status;
    if (!res.body || !(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      await res.text().catch(() => '');
      watch.endedAt = Date.now();
      return watch;
    }
    void watch.read(res.body);
    return watch;
  }

  private async read(body: ReadableStream<Uint8Array>) {
    const decoder = new TextDecoder();
    const parser = new SseParser();
    try {
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
        for (const value of parser.push(decoder.decode(chunk, { stream: true })))
          this.events.push({ at: Date.now(), value });
      }
    } catch {
      /* aborted */
    }
    this.endedAt ??= Date.now();
  }

  closedEvent() {
    return closedEventOf(this.events);
  }

  close() {
    this.abort.abort();
  }
}

export type HubMessage = Record<string, any>;

/** The messages of one hub frame: JSON records, each ended by the record separator. */
export function hubRecords(frame: string): HubMessage[] {
  return frame
    .split('\u001e')
    .filter(Boolean)
    .map((record) => JSON.parse(record) as HubMessage);
}

/** The hub's Close message (type 7). */
export function closeMessageOf(received: ReadonlyArray<Timed<HubMessage>>): Timed<HubMessage> | undefined {
  return received.find((r) => r.value.type === 7);
}

/** Ticks: OnTick invocations and stream items. */
export function ticksOf(received: ReadonlyArray<Timed<HubMessage>>): Array<Timed<HubMessage>> {
  return received.filter((r) => (r.value.type === 1 && r.value.target === 'OnTick') || r.value.type === 2);
}

export class HubWatch {
  readonly received: Array<Timed<HubMessage>> = [];
  openedAt = 0;
  /** When the close frame came (the socket went CLOSING without this side closing it), and when it was closed. */
  closeFrameAt: number | null = null;
  closedAt: number | null = null;
  private poller: ReturnType<typeof setInterval> | undefined;

  private constructor(readonly ws: WebSocket) {}

  /** Negotiates and opens a socket on `platform`'s PF4 hub at `edgeUrl`; with `handshake`, once the hub accepted it. */
  static async open(
    edgeUrl: string,
    token: string,
    options: { handshake: boolean; platform: string },
  ): Promise<HubWatch> {
    const { platform } = options;
    const negotiate = await fetch(`${edgeUrl}/hubs/pf4/v2/negotiate?negotiateVersion=1&tradePlatform=${platform}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    await negotiate.arrayBuffer();
    if (negotiate.status !== 200) throw new Error(`hub negotiate answered ${negotiate.status}`);
    const ws = new WebSocket(
      `${edgeUrl.replace('http', 'ws')}/hubs/pf4/v2?tradePlatform=${platform}&access_token=${token}`,
    );
    const hub = new HubWatch(ws);
    ws.on('message', (d) => {
      for (const m of hubRecords((d as Buffer).toString())) {
        hub.received.push({ at: Date.now(), value: m });
        if (m.type === 1 && m.invocationId) hub.send({ type: 3, invocationId: m.invocationId, error: 'no result' });
      }
    });
    ws.on('close', () => {
      hub.closedAt ??= Date.now();
      hub.closeFrameAt ??= hub.closedAt;
      hub.stopPolling();
    });
    ws.on('error', () => {});
    await new Promise((resolveOpen, reject) => {
      ws.once('open', resolveOpen);
      ws.once('error', reject);
    });
    hub.openedAt = Date.now();
    hub.poller = setInterval(() => {
      if (ws.readyState >= WebSocket.CLOSING) {
        hub.closeFrameAt ??= Date.now();
        hub.stopPolling();
      }
    }, 50);
    if (options.handshake) {
      hub.send({ protocol: 'json', version: 1 });
      await until(() => hub.received.length > 0, 10_000);
      if (JSON.stringify(hub.received[0]?.value) !== '{}')
        throw new Error(`hub handshake answered ${JSON.stringify(hub.received[0]?.value)}`);
    }
    return hub;
  }

  send(m: object) {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(m) + '\u001e');
  }

  closeMessage() {
    return closeMessageOf(this.received);
  }

  ticks() {
    return ticksOf(this.received);
  }

  completion(invocationId: string) {
    return this.received.find((r) => r.value.type === 3 && r.value.invocationId === invocationId)?.value;
  }

  private stopPolling() {
    if (this.poller) clearInterval(this.poller);
    this.poller = undefined;
  }

  terminate() {
    this.stopPolling();
    this.ws.terminate();
  }
}
