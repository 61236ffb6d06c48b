/**
 * Serves the reference web terminal (examples/web-terminal) as static files on a loopback port of its own: another
 * origin than the gateway's, which lets it call the gateway only when CORS_ORIGINS lists it (`npm start` lists
 * TERMINAL_ORIGIN unless CORS_ORIGINS is set). `npm run terminal` and the browser test use it. The files are served
 * as they are in the repository (no build), with the SignalR browser bundle from node_modules as
 * `vendor/signalr.min.js`; nothing here knows a credential.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';

/** The port `npm run terminal` takes unless TERMINAL_PORT says otherwise, and so the origin `npm start` allows. */
export const TERMINAL_PORT = 8788;
export const TERMINAL_ORIGIN = `http://127.0.0.1:${TERMINAL_PORT}`;

const ROOT = resolve(import.meta.dirname, '../examples/web-terminal');
const SIGNALR = join(dirname(createRequire(import.meta.url).resolve('@microsoft/signalr/package.json')), 'dist/browser/signalr.min.js');
const TYPES: Record<string, string> = { html: 'text/html', js: 'text/javascript', css: 'text/css' };

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

export async function serveTerminal(port = 0): Promise<TerminalServer> {
  const server = createServer(async (req, res) => {
    const file = fileOf(new URL(req.url ?? '/', 'http://localhost').pathname);
    const body = file && req.method === 'GET' ? await readFile(file).catch(() => null) : null;
    if (!body) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, {
      'content-type': `${TYPES[file!.split('.').pop()!]}; charset=utf-8`,
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
    });
    res.end(body);
  });
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', done);
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    close: () => new Promise<void>((done) => { server.closeAllConnections(); server.close(() => done()); }),
  };
}
