/**
 * A Server-Sent Events reader with EventSource semantics over fetch (so it can send the bearer token): parses
 * `id`/`event`/`data`/`retry` fields and comments, keeps the last event id, and can reconnect with `Last-Event-ID`.
 */
export interface SseEvent {
  id: string | null;
  event: string;
  data: string;
}

export class SseReader {
  readonly events: SseEvent[] = [];
  lastEventId: string | null = null;
  status = 0;
  ended = false;
  private readonly abort = new AbortController();
  private done: Promise<void> = Promise.resolve();

  static async open(
    url: string,
    token: string,
    lastEventId?: string,
    headers: Record<string, string> = {},
  ): Promise<SseReader> {
    const reader = new SseReader();
    const res = await fetch(url, {
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'text/event-stream',
        ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
        ...headers,
      },
      signal: reader.abort.signal,
    });
    reader.status = res.status;
    if (!res.body || !(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      reader.ended = true;
      reader.body = await res.text();
      return reader;
    }
    reader.done = reader.read(res.body);
    return reader;
  }

  /** The body of an answer that was not a stream. */
  body = '';

  of(event: string): SseEvent[] {
    return this.events.filter((e) => e.event === event);
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    let current: { id: string | null; event: string; data: string[] } = { id: null, event: 'message', data: [] };
    try {
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl).replace(/\r$/, '');
          buffer = buffer.slice(nl + 1);
          if (line === '') {
            if (current.data.length > 0) {
              if (current.id !== null) this.lastEventId = current.id;
              this.events.push({ id: current.id, event: current.event, data: current.data.join('\n') });
            }
            current = { id: null, event: 'message', data: [] };
            continue;
          }
          if (line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'id') current.id = value;
          else if (field === 'event') current.event = value;
          else if (field === 'data') current.data.push(value);
        }
      }
    } catch {
      /* aborted */
    }
    this.ended = true;
  }

  async close(): Promise<void> {
    this.abort.abort();
    await this.done;
  }
}
