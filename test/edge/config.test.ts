/**
 * The edge's configuration in local workerd (workers/config.ts): a wrong variable is logged once, in the sentence
 * `npm start` refuses it with, however many requests the isolate serves, and the edge keeps serving with the
 * variable's fallback (CORS_ORIGINS: its entries that are origins).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEdge, type TestEdge } from '../support/edge.js';

const lines: string[] = [];
let edge: TestEdge;

beforeAll(async () => {
  edge = await startTestEdge({
    vars: { API_RATE_LIMIT: '30k', CORS_ORIGINS: 'https://terminal.example.com https://other.example.com/path' },
    log: (line) => {
      lines.push(line);
    },
  });
});
afterAll(async () => {
  await edge?.close();
});

describe('a wrong edge variable', () => {
  it('is logged once per problem and the edge serves with the fallback', async () => {
    const origin = 'https://terminal.example.com';
    for (let i = 0; i < 5; i++) {
      const res = await fetch(new URL('/livez', edge.url), { headers: { origin } });
      expect(res.status).toBe(200);
      // The entries of CORS_ORIGINS that are origins still apply.
      expect(res.headers.get('access-control-allow-origin')).toBe(origin);
    }
    const other = await fetch(new URL('/livez', edge.url), { headers: { origin: 'https://other.example.com' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    // API calls are limited by the default, not refused.
    const api = await fetch(new URL('/api/Organizations', edge.url), {
      headers: { authorization: `Bearer ${await edge.token()}` },
    });
    expect(api.status).toBe(200);

    const logged = lines
      .filter((l) => l.includes('wrong edge variable'))
      .map((l) => JSON.parse(l.slice(l.indexOf('{'))) as { problem: string });
    expect(logged.map((l) => l.problem)).toEqual([
      'API_RATE_LIMIT must be a whole number of requests from 0 to 1000000000, got "30k"',
      expect.stringMatching(/^CORS_ORIGINS must be \* or origins .*not an origin: https:\/\/other\.example\.com\/path/),
    ]);
  });
});
