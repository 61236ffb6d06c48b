/**
 * The broker process of `npm run bench:broker`: the broker exactly as `broker/main.ts` starts it (platform file,
 * edge links on `/link`), plus, in the same process, a bare `ws` echo server and a status route, so that the bench
 * can compare a cached read over an edge link with a plain WebSocket round trip between the same two processes, and
 * read this process's memory and cache state.
 *
 * Environment: BROKER_SECRET, BROKER_PLATFORMS_FILE (both required), BENCH_PING_TIMEOUT_MS (optional). Prints one JSON ready line
 * `{"msg":"broker bench host listening","port":<broker>,"echoPort":<echo and status>}`.
 * `GET /status[?gc=1]` on the echo port answers `{ready, sizes, memory}`: `ready` once every platform's cache holds
 * a full snapshot; with `gc=1` a full garbage collection runs first, so `memory` is what the broker keeps.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { WebSocketServer } from 'ws';
import { startBroker } from '../broker.js';
import { jsonLineLogger } from '../observability/log.js';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const secret = process.env.BROKER_SECRET;
const platformsFile = process.env.BROKER_PLATFORMS_FILE;
if (!secret || !platformsFile) throw new Error('BROKER_SECRET and BROKER_PLATFORMS_FILE are required');

/** BENCH_PING_TIMEOUT_MS: the manager keep-alive's patience, when the bench needs more than the broker's default. */
const pingTimeoutMs = Number(process.env.BENCH_PING_TIMEOUT_MS) || undefined;
const broker = await startBroker({
  secret, port: 0, platformsFile, brokerId: 'bench', log: jsonLineLogger('warn'), ...(pingTimeoutMs ? { session: { pingTimeoutMs } } : {}),
});

const status = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  if (url.pathname !== '/status') {
    res.writeHead(404).end();
    return;
  }
  if (url.searchParams.get('gc') === '1') collectGarbage();
  const platforms = [...broker.platforms.all()];
  const memory = process.memoryUsage();
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
    ready: platforms.length > 0 && platforms.every((p) => p.cache.ready),
    sizes: Object.fromEntries(platforms.map((p) => [p.id, p.cache.sizes()])),
    memory: { rssMB: memory.rss / 1048576, heapUsedMB: memory.heapUsed / 1048576, externalMB: memory.external / 1048576 },
  }));
});
// The same library and settings as the edge link server (no compression), answering each frame with itself.
const echo = new WebSocketServer({ server: status, perMessageDeflate: false });
echo.on('connection', (ws) => {
  ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
});
await new Promise<void>((resolve) => status.listen(0, '127.0.0.1', resolve));

process.stdout.write(`${JSON.stringify({ msg: 'broker bench host listening', port: broker.port, echoPort: (status.address() as AddressInfo).port })}\n`);

const stop = () => {
  echo.close();
  status.close();
  broker.close().then(() => process.exit(0), () => process.exit(1));
  setTimeout(() => process.exit(1), 5000).unref();
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
