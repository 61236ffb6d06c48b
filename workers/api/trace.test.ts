/**
 * W3C trace context at the edge (workers/api/trace.ts) in a Hono app in this process, with the random bytes given:
 * the trace id kept from a valid `traceparent` or made from the one draw of randomness, and the answered
 * `traceparent` naming the edge's span.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Hono } from 'hono';
import type { AppEnv } from '../env.js';
import { traceContext } from './trace.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
let draws: number[];

beforeEach(() => {
  draws = [];
  // Byte i of a draw is 0xa0 + i: the hex shows which byte went where.
  vi.spyOn(crypto, 'getRandomValues').mockImplementation(<T extends ArrayBufferView | null>(array: T): T => {
    const bytes = array as unknown as Uint8Array;
    draws.push(bytes.length);
    for (let i = 0; i < bytes.length; i++) bytes[i] = 0xa0 + i;
    return array;
  });
});
afterEach(() => {
  vi.restoreAllMocks();
});

const hex = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => (0xa0 + from + i).toString(16)).join('');

const app = new Hono<AppEnv>();
app.use('*', traceContext());
app.get('/', (c) => c.text(`trace ${c.get('traceId')}`));

async function call(headers: Record<string, string> = {}) {
  const res = await app.request('/', { headers });
  return { body: await res.text(), traceparent: res.headers.get('traceparent') };
}

describe('traceContext', () => {
  it('keeps the trace id and flags of a valid traceparent, with a new 8-byte span id', async () => {
    expect(await call({ traceparent: `00-${TRACE}-00f067aa0ba902b7-00` })).toStrictEqual({
      body: `trace ${TRACE}`,
      traceparent: `00-${TRACE}-${hex(0, 8)}-00`,
    });
    expect(draws).toEqual([8]);
  });

  it('makes a trace id and a span id of one 24-byte draw without a valid traceparent, sampled', async () => {
    const invalid: Array<Record<string, string>> = [
      {},
      { traceparent: `00-${'0'.repeat(32)}-00f067aa0ba902b7-01` },
      { traceparent: 'garbage' },
    ];
    for (const headers of invalid) {
      expect(await call(headers)).toStrictEqual({
        body: `trace ${hex(0, 16)}`,
        traceparent: `00-${hex(0, 16)}-${hex(16, 24)}-01`,
      });
    }
    expect(draws).toEqual([24, 24, 24]);
  });
});
