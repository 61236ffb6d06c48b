/**
 * A minimal Chrome DevTools protocol session over an inspector's WebSocket: what `npm run bench:profile` and
 * `npm run soak` ask local workerd's isolates (CPU profiles, garbage collection, heap use).
 */
import WebSocket from 'ws';

export class Inspector {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve(v: any): void; reject(e: Error): void }>();
  /** The isolate's execution context, once `Runtime.enable` has announced it (workerd has no default one). */
  private context: Promise<number> | undefined;
  private onContext: ((id: number) => void) | undefined;
  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const msg = JSON.parse((data as Buffer).toString()) as {
        id?: number;
        method?: string;
        params?: any;
        result?: unknown;
        error?: { message: string };
      };
      if (msg.method === 'Runtime.executionContextCreated') this.onContext?.(msg.params.context.id as number);
      if (msg.id === undefined) return;
      const w = this.waiting.get(msg.id);
      this.waiting.delete(msg.id);
      if (msg.error) w?.reject(new Error(msg.error.message));
      else w?.resolve(msg.result);
    });
  }

  static open(url: string): Promise<Inspector> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { maxPayload: 512 * 1024 * 1024 });
      ws.once('open', () => resolve(new Inspector(ws)));
      ws.once('error', reject);
    });
  }

  send<T = any>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  /** The value of a JavaScript expression in the isolate (a string, number, boolean or null). */
  async evaluate(expression: string): Promise<unknown> {
    this.context ??= new Promise<number>((resolve, reject) => {
      this.onContext = resolve;
      this.send('Runtime.enable').catch(reject);
    });
    const contextId = await this.context;
    const r = await this.send<{ result: { value?: unknown }; exceptionDetails?: { text: string } }>(
      'Runtime.evaluate',
      { expression, contextId, returnByValue: true },
    );
    if (r.exceptionDetails) throw new Error(`${expression}: ${r.exceptionDetails.text}`);
    return r.result.value;
  }

  close(): void {
    this.ws.terminate();
  }
}

/** The inspector sessions of named workers of a Miniflare whose `inspectorPort` is set: `core:user:<worker>` targets. */
export async function inspectWorkers(inspectorUrl: URL, workers: readonly string[]): Promise<Inspector[]> {
  const targets = (await (await fetch(`http://${inspectorUrl.host}/json/list`)).json()) as {
    id: string;
    webSocketDebuggerUrl: string;
  }[];
  return Promise.all(
    workers.map((worker) => {
      const target = targets.find((t) => t.id === `core:user:${worker}`);
      if (!target)
        throw new Error(`the inspector lists no ${worker} worker (targets: ${targets.map((t) => t.id).join(', ')})`);
      return Inspector.open(target.webSocketDebuggerUrl);
    }),
  );
}
