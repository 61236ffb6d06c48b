/**
 * The edge `npm run bench` runs (bench-only, never deployed): the real edge app and its Durable Object classes, plus
 * one route, `/bench/fixed/{bytes}`, that answers a JSON body of that many bytes from memory through the same router
 * and global middleware as `/livez`. It is the baseline of large answers: a cached page read as a ratio to it is read
 * against what sending that many bytes through the edge costs, whatever the machine.
 */
import { createApp } from '../../workers/app.js';

// Every Durable Object class the edge binds, as its own entry exports them.
export { PlatformLink, IdempotencyLedger, ClientRateLimiter, PlatformStream, AuditTrail } from '../../workers/index.js';

/** Bodies by size, each built once: `{"data":"xxx…"}` of exactly that many bytes (at least 11). */
const bodies = new Map<number, string>();
const MAX_BYTES = 16 * 1024 * 1024;

function bodyOf(bytes: number): string {
  let body = bodies.get(bytes);
  if (body === undefined) {
    body = `{"data":"${'x'.repeat(Math.max(0, bytes - 11))}"}`;
    bodies.set(bytes, body);
  }
  return body;
}

const app = createApp();
app.get('/bench/fixed/:bytes', (c) => {
  const bytes = Number(c.req.param('bytes'));
  if (!Number.isInteger(bytes) || bytes < 0 || bytes > MAX_BYTES) return c.text('bytes: an integer up to 16 MiB', 400);
  return c.body(bodyOf(bytes), 200, { 'content-type': 'application/json; charset=utf-8' });
});

export default app;
