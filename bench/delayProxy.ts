/**
 * A TCP proxy on 127.0.0.1 that holds every chunk for a one-way delay in each direction before passing it on, in
 * order: a region's distance from the brokers, for the regions bench (`npm run bench:regions`) and the tests of a
 * region that cannot reach them. WebSocket and HTTP cross it untouched; a round trip through it costs twice the delay.
 * `close()` ends every connection; `stop()` stops taking new ones and drops the open ones (a region cut off), and
 * `listen()` again takes connections on the same port.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { isEntryModule } from '../shared/entryModule.js';

export interface DelayProxy {
  /** The proxy's base URL (`http://127.0.0.1:<port>`). */
  url: string;
  port: number;
  /** The one-way delay now, in milliseconds; may be changed while the proxy runs. */
  delayMs: number;
  /** Connections taken so far. */
  connections: number;
  /** Stops listening and drops every open connection. */
  stop(): Promise<void>;
  /** Listens again on the same port after `stop()`. */
  listen(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Passes `from`'s data to `to` after `delay()` ms, chunk by chunk in order: each chunk leaves at its arrival time plus
 * the delay, so a steady stream keeps its rate and gains only latency.
 */
function delayed(from: Socket, to: Socket, delay: () => number): void {
  const queue: Array<{ at: number; chunk: Buffer }> = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let ended = false;
  const flush = () => {
    timer = undefined;
    const now = Date.now();
    while (queue.length > 0 && queue[0].at <= now) to.write(queue.shift()!.chunk);
    if (queue.length > 0) timer = setTimeout(flush, queue[0].at - now);
    else if (ended) to.end();
  };
  from.on('data', (chunk: Buffer) => {
    queue.push({ at: Date.now() + delay(), chunk });
    if (timer === undefined) timer = setTimeout(flush, Math.max(0, queue[0].at - Date.now()));
  });
  from.on('end', () => {
    ended = true;
    if (timer === undefined) flush();
  });
}

/** Starts a proxy to `target` (`host:port` or an http(s) URL) with `delayMs` each way; `port` 0 picks a free one. */
export async function startDelayProxy(target: string, delayMs: number, port = 0): Promise<DelayProxy> {
  const url = /^https?:\/\//.test(target) ? new URL(target) : new URL(`http://${target}`);
  const targetPort = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const open = new Set<Socket>();
  let server: Server | undefined;
  const proxy: DelayProxy = {
    url: '',
    port,
    delayMs,
    connections: 0,
    async listen() {
      const s = createServer((client) => {
        proxy.connections++;
        const upstream = connect(targetPort, url.hostname);
        for (const socket of [client, upstream]) {
          open.add(socket);
          socket.setNoDelay(true);
          socket.on('close', () => open.delete(socket));
          socket.on('error', () => {
            client.destroy();
            upstream.destroy();
          });
        }
        delayed(client, upstream, () => proxy.delayMs);
        delayed(upstream, client, () => proxy.delayMs);
      });
      await new Promise<void>((resolve, reject) => {
        s.once('error', reject);
        s.listen(proxy.port, '127.0.0.1', () => resolve());
      });
      server = s;
      proxy.port = (s.address() as AddressInfo).port;
      proxy.url = `http://127.0.0.1:${proxy.port}`;
    },
    async stop() {
      const s = server;
      server = undefined;
      for (const socket of open) socket.destroy();
      if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
    },
    close: () => proxy.stop(),
  };
  await proxy.listen();
  return proxy;
}

/** A port free now on 127.0.0.1 (nothing listens on it once this resolves), for a proxy to take later. */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', () => resolve()));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** Proxies running in a process of their own (`spawnDelayProxies`). */
export interface DelayProxies {
  /** Each proxy's base URL, in the order of the delays asked for. */
  urls: string[];
  close(): Promise<void>;
}

/**
 * Starts one proxy to `target` per delay in a Node process of its own, so the timers holding each chunk run on an
 * event loop that the bench's clients do not load: a client busy parsing answers would otherwise hold the chunks of
 * every region past their delay.
 */
export async function spawnDelayProxies(target: string, delaysMs: number[]): Promise<DelayProxies> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(import.meta.url), target, ...delaysMs.map(String)],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout.setEncoding('utf8');
  const ready = new Promise<string[]>((resolve, reject) => {
    child.stdout.on('data', (text: string) => {
      out += text;
      const line = out.split('\n')[0];
      if (out.includes('\n')) resolve((JSON.parse(line) as { urls: string[] }).urls);
    });
    child.once('exit', (code) => reject(new Error(`the delay proxies exited (${code}) before listening`)));
  });
  const urls = await ready;
  return {
    urls,
    async close() {
      if (child.exitCode !== null) return;
      child.stdin.end();
      await once(child, 'exit');
    },
  };
}

if (isEntryModule(import.meta.url)) {
  // `<target> <delay ms>...`: prints `{"urls":[...]}` once every proxy listens, and stops when stdin closes.
  const [target, ...delays] = process.argv.slice(2);
  const proxies = await Promise.all(delays.map((d) => startDelayProxy(target, Number(d))));
  process.stdout.write(`${JSON.stringify({ urls: proxies.map((p) => p.url) })}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => {
    void Promise.all(proxies.map((p) => p.close())).then(() => process.exit(0));
  });
}
