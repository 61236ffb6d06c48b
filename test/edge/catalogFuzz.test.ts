/**
 * The short fuzz run of `npm test`: every catalog route of the real worker (in workerd) against a scripted broker
 * that answers every call, a few generated requests each (FUZZ_RUNS_PER_ROUTE, default 3), plus the token endpoint.
 * `npm run drill:fuzz` runs the same properties longer (40 per route by default). FUZZ_SEED replays a run. See catalogFuzz.ts for what is generated and what must hold.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { edgeWithFakeBroker } from './gatewayFakeBroker.js';
import { fuzzedRoutes, fuzzRoute, tokenRequests } from './catalogFuzz.js';

/** A few per route in `npm test`; `npm run drill:fuzz` runs many more (the script name is npm's npm_lifecycle_event). */
const DRILL = process.env.npm_lifecycle_event === 'drill:fuzz';
const RUNS = Math.max(1, Number(process.env.FUZZ_RUNS_PER_ROUTE ?? (DRILL ? 40 : 3)));
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
const routes = fuzzedRoutes();
const setup = edgeWithFakeBroker({ API_RATE_LIMIT: '0', TOKEN_RATE_LIMIT: '0', TOKEN_FAILURE_LIMIT: '0', TOKEN_VERIFY_LIMIT: '0' });

describe('fuzzing every catalog route', () => {
  it(`keeps v2 an envelope and v1 free of 5xx on ${routes.length} routes, ${RUNS} generated requests each`, async () => {
    const failures: string[] = [];
    for (const entry of routes) {
      try {
        await fuzzRoute(setup.edge.url, setup.token, entry, RUNS, SEED);
      } catch (error) {
        failures.push(`${entry.id}: ${(error as Error).message.split('\n').slice(0, 6).join('\n')}`);
        if (failures.length >= 5) break;
      }
    }
    expect(failures).toEqual([]);
    // No crash: the worker still answers.
    expect((await fetch(new URL('/livez', setup.edge.url))).status).toBe(200);
  }, Math.max(120_000, routes.length * RUNS * 500));

  it('never answers the token endpoint with a 5xx', async () => {
    await fc.assert(fc.asyncProperty(tokenRequests, async ({ body, contentType, authorization }) => {
      const headers: Record<string, string> = contentType ? { 'content-type': contentType } : {};
      if (authorization) headers.authorization = authorization;
      const res = await fetch(new URL('/connect/token', setup.edge.url), { method: 'POST', headers, body });
      const text = await res.text();
      expect(res.status, text).toBeLessThan(500);
      expect(() => JSON.parse(text)).not.toThrow();
    }), { numRuns: RUNS * 20, seed: SEED });
  }, 120_000);
});
