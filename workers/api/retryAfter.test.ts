/**
 * `Retry-After` on the edge's 503 and 504 answers (workers/api/retryAfter.ts) in a Hono app in this process: the
 * seconds per status, an answer that names its own, and one passed through with immutable headers.
 */
import { describe, expect, it } from 'vitest';
import { Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { AppEnv } from '../env.js';
import { retryAfter } from './retryAfter.js';

/** Headers that refuse every change, as those of a response passed through from a fetch. */
class ImmutableHeaders extends Headers {
  override set(): void {
    throw new TypeError('immutable headers');
  }
  override append(): void {
    throw new TypeError('immutable headers');
  }
  override delete(): void {
    throw new TypeError('immutable headers');
  }
}
function passedThrough(body: string, init: ResponseInit): Response {
  const res = new Response(body, init);
  Object.defineProperty(res, 'headers', { value: new ImmutableHeaders(res.headers) });
  return res;
}

const app = new Hono<AppEnv>();
app.use('*', retryAfter());
app.get('/status/:status', (c) =>
  c.text(`answer ${c.req.param('status')}`, Number(c.req.param('status')) as ContentfulStatusCode),
);
app.get('/own', (c) => c.text('busy', 503, { 'Retry-After': '30' }));
app.get('/through/:status', (c) =>
  passedThrough('passed through', { status: Number(c.req.param('status')), headers: { 'X-Upstream': 'kept' } }),
);

describe('retryAfter', () => {
  it('adds 5 s to a 503 and 1 s to a 504, and nothing to any other status', async () => {
    for (const [status, seconds] of [
      [503, '5'],
      [504, '1'],
      [200, null],
      [429, null],
      [500, null],
      [502, null],
    ] as const) {
      const res = await app.request(`/status/${status}`);
      expect(res.status).toBe(status);
      expect(res.headers.get('retry-after'), String(status)).toBe(seconds);
      expect(await res.text()).toBe(`answer ${status}`);
    }
  });

  it('leaves a Retry-After the answer names itself', async () => {
    const res = await app.request('/own');
    expect(res.headers.get('retry-after')).toBe('30');
    expect(await res.text()).toBe('busy');
  });

  it('answers a copy of a passed-through answer, with its status, headers and body', async () => {
    const res = await app.request('/through/504');
    expect(res.status).toBe(504);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.headers.get('x-upstream')).toBe('kept');
    expect(await res.text()).toBe('passed through');
    const ok = await app.request('/through/200');
    expect(ok.headers.get('retry-after')).toBeNull();
    expect(await ok.text()).toBe('passed through');
  });
});
