/**
 * Serves the reference web terminal (examples/web-terminal) as static files on a loopback port of its own: another
 * origin than the gateway's, which lets it call the gateway only when CORS_ORIGINS lists it (`npm start` lists
 * TERMINAL_ORIGIN unless CORS_ORIGINS is set). `npm run terminal` and the browser test use it. The files are served
 * as they are in the repository (no build), with the SignalR browser bundle from node_modules as
 * `vendor/signalr.min.js`; nothing here knows a credential.
 *
 * It serves them for one gateway: the page is told which (`<meta name="gateway">`, the Gateway field's value) and its
 * Content-Security-Policy lets it connect to that gateway alone, the edge's /terminal/ policy otherwise
 * (workers/terminal): a link naming another gateway cannot send the typed secret there.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { terminalContentPolicy } from '../shared/terminalPolicy.js';
import { DEFAULT_TERMINAL_PORT } from '../shared/environment.js';

/** The port `npm run terminal` takes unless TERMINAL_PORT says otherwise, and so the origin `npm start` allows. */
export const TERMINAL_PORT = DEFAULT_TERMINAL_PORT;
export const TERMINAL_ORIGIN = `http://127.0.0.1:${TERMINAL_PORT}`;

const ROOT = resolve(import.meta.dirname, '../examples/web-terminal');
const SIGNALR = join(
  dirname(createRequire(import.meta.url).resolve('@microsoft/signalr/package.json')),
  'dist/browser/signalr.min.js',
);
const TYPES: Record<string, string> = { html: 'text/html', js: 'text/javascript', css: 'text/css' };

/**
 * The origin of the gateway `value` names (`name` is the setting's name, for the error): an http:// or https:// URL
 * with nothing after its origin, whose host is a plain name or address (it goes into a policy and the page as is).
 */
export function gatewayOrigin(value: string, name = 'GATEWAY_URL'): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(
      `${name} must be an http:// or https:// URL such as http://127.0.0.1:8787 (got ${JSON.stringify(value)})`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`${name} must be an http:// or https:// URL (got ${JSON.stringify(value)})`);
  if (url.username || url.password || url.pathname !== '/' || url.search || url.hash) {
    throw new Error(
      `${name} must be the gateway's origin alone, with no credentials, path, query or fragment (got ${JSON.stringify(value)})`,
    );
  }
  if (!/^(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])$/.test(url.hostname)) {
    throw new Error(`${name}'s host must be a name or an IP address (got ${JSON.stringify(url.hostname)})`);
  }
  return url.origin;
}

/**
 * The page's policy: the edge's for /terminal/ (workers/terminal/terminal.ts), but the page connects to `gateway`
 * alone (its http(s) and its WebSocket form, for the hub) instead of its own origin.
 */
export function terminalPolicy(gateway: string): string {
  return terminalContentPolicy(`${gateway} ${gateway.replace(/^http/, 'ws')}`);
}

/** The page, told its gateway: `<meta name="gateway">` first in its head (`gateway` is an origin: nothing to escape). */
function withGateway(html: Buffer, gateway: string): Buffer {
  return Buffer.from(html.toString('utf8').replace('<head>', `<head>\n  <meta name="gateway" content="${gateway}">`));
}

/** The file each path names: the page's own files by name, and the SignalR bundle; nothing else. */
function fileOf(path: string): string | null {
  if (path === '/' || path === '/index.html') return join(ROOT, 'index.html');
  if (path === '/vendor/signalr.min.js') return SIGNALR;
  const name = /^\/([\w-]+\.(?:js|css))$/.exec(path)?.[1];
  return name ? join(ROOT, name) : null;
}

export interface TerminalServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** Serves the terminal on 127.0.0.1:`port` (0: any free port) for the gateway at `gateway` (its origin). */
export async function serveTerminal({
  gateway,
  port = 0,
}: {
  gateway: string;
  port?: number;
}): Promise<TerminalServer> {
  const origin = gatewayOrigin(gateway, 'gateway');
  const policy = terminalPolicy(origin);
  // Node's server does not wait on a handler's promise: the reading of a file goes on beside it.
  const server = createServer(
    (req, res) =>
      void (async () => {
        const file = fileOf(new URL(req.url ?? '/', 'http://localhost').pathname);
        const found = file && req.method === 'GET' ? await readFile(file).catch(() => null) : null;
        if (!found) {
          res.writeHead(404, { 'content-type': 'text/plain', 'content-security-policy': policy }).end('not found');
          return;
        }
        const body = file!.endsWith('.html') ? withGateway(found, origin) : found;
        res.writeHead(200, {
          'content-type': `${TYPES[file!.split('.').pop()!]}; charset=utf-8`,
          'cache-control': 'no-cache',
          'content-security-policy': policy,
          'x-content-type-options': 'nosniff',
          'referrer-policy': 'no-referrer',
        });
        res.end(body);
      })(),
  );
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', done);
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
