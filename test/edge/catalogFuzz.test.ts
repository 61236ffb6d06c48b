/**
 * The short fuzz run of `npm test`: every catalog route of the real worker (in workerd) against a scripted broker
 * that answers every call, a few generated requests each (FUZZ_RUNS_PER_ROUTE, default 3), plus the token endpoint.
 * `npm run drill:fuzz` runs the same properties longer (40 per route by default). FUZZ_SEED replays a run. See catalogFuzz.ts for what is generated and what must hold.
 * Then framing and size, case by case: arrays past the edge's bound, a large body wrong in every item, bytes that are
 * not UTF-8, a broken chunked encoding and a body cut short (over a raw socket, to the API and the token endpoint),
 * and callers gone mid-body; none of it answered or logged as an internal error.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { edgeWithFakeBroker } from './gatewayFakeBroker.js';
import { dropMidBody, fuzzedRoutes, fuzzRoute, MAX_REFUSAL_LENGTH, rawExchange, tokenRequests } from './catalogFuzz.js';
import { PF4_A, PF5_A } from '../support/edge.js';
import { until } from '../support/until.js';

/** A few per route in `npm test`; `npm run drill:fuzz` runs many more (the script name is npm's npm_lifecycle_event). */
const DRILL = process.env.npm_lifecycle_event === 'drill:fuzz';
const RUNS = Math.max(1, Number(process.env.FUZZ_RUNS_PER_ROUTE ?? (DRILL ? 40 : 3)));
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
const routes = fuzzedRoutes();
/** The worker's output lines, both streams. */
const lines: string[] = [];
const setup = edgeWithFakeBroker(
  { API_RATE_LIMIT: '0', TOKEN_RATE_LIMIT: '0', TOKEN_FAILURE_LIMIT: '0', TOKEN_VERIFY_LIMIT: '0' },
  {
    log: (line) => {
      lines.push(line);
    },
  },
);
const UNHANDLED = '"msg":"unhandled edge error"';
const UNREADABLE_BODY =
  'body: could not be read to its end (a broken chunked encoding, or the connection closed mid-body)';
const NOT_UTF8_BODY = 'body: must be UTF-8 text (it holds bytes that are not UTF-8)';
const NOT_READ = '"msg":"request body not read to its end"';

describe('fuzzing every catalog route', () => {
  it(
    `keeps v2 an envelope and v1 free of 5xx on ${routes.length} routes, ${RUNS} generated requests each`,
    async () => {
      const failures: string[] = [];
      for (const entry of routes) {
        try {
          await fuzzRoute(setup.edge.url, setup.token, entry, RUNS, SEED);
        } catch (error) {
          // Each line cut short: a counterexample may carry a body of hundreds of kilobytes.
          // The property's own failure (what the route answered) is the report's cause.
          const cause = (error as Error).cause;
          failures.push(
            `${entry.id}: ${(error as Error).message
              .split('\n')
              .slice(0, 6)
              .map((line) => line.slice(0, 600))
              .join('\n')}${cause instanceof Error ? `\ncause: ${cause.message.slice(0, 600)}` : ''}`,
          );
          if (failures.length >= 5) break;
        }
      }
      expect(failures).toEqual([]);
      // No crash: the worker still answers, and nothing was an internal error.
      expect((await fetch(new URL('/livez', setup.edge.url))).status).toBe(200);
      expect(lines.filter((line) => line.includes(UNHANDLED))).toEqual([]);
    },
    Math.max(120_000, routes.length * RUNS * 500),
  );

  it('never answers the token endpoint with a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(tokenRequests, async ({ body, contentType, authorization }) => {
        const headers: Record<string, string> = contentType ? { 'content-type': contentType } : {};
        if (authorization) headers.authorization = authorization;
        const res = await fetch(new URL('/connect/token', setup.edge.url), { method: 'POST', headers, body });
        const text = await res.text();
        expect(res.status, text).toBeLessThan(500);
        expect(() => JSON.parse(text)).not.toThrow();
      }),
      { numRuns: RUNS * 20, seed: SEED },
    );
  }, 120_000);
});

describe('framing and size', () => {
  const v2 = `/api/v2/PF4/${PF4_A}`;
  const v1 = `/api/PF4/${PF4_A}`;
  const post = async (path: string, body: string | Uint8Array<ArrayBuffer>) => {
    const res = await fetch(new URL(path, setup.edge.url), {
      method: 'POST',
      body,
      headers: { authorization: `Bearer ${setup.token}`, 'content-type': 'application/json' },
    });
    return { status: res.status, body: await res.json() };
  };
  const v2Refusal = (message: string | RegExp) => ({
    data: null,
    error: { code: 'Validation', managerCode: null, message },
    meta: { activityId: expect.any(String) },
  });
  const v1Refusal = (message: string | RegExp) => ({
    errorType: 'Validation',
    errorCode: 'Validation',
    errorDescription: message,
  });
  const items = (n: number, item: string) => `[${`${item},`.repeat(n - 1)}${item}]`;
  const head = (path: string, framing: string) =>
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${setup.token}\r\nContent-Type: application/json\r\n${framing}\r\n`;

  it('refuses an array of 130000 items naming it and the bound: v2 in its envelope, v1 with 400', async () => {
    expect(await post(`${v2}/UserRecordNew`, items(130_000, '1'))).toStrictEqual({
      status: 200,
      body: v2Refusal('body: must hold at most 120000 items'),
    });
    expect(await post(`${v1}/UserRecordNew`, `{"group":"demo","name":"a","x":${items(130_000, '{}')}}`)).toStrictEqual({
      status: 400,
      body: v1Refusal('body.x: must hold at most 120000 items'),
    });
    expect(setup.broker.frames).toStrictEqual([]);
  });

  it('answers a body of 250 KB wrong in every item with its first ten problems and a count', async () => {
    const many = await post(`${v2}/NotificationsSend`, `{"message":"m","logins":${items(50_000, '"xx"')}}`);
    const listed = Array.from(
      { length: 10 },
      (_, i) => `body.logins.${i}: Invalid input: expected number, received string`,
    );
    expect(many).toStrictEqual({ status: 200, body: v2Refusal(`${listed.join('; ')}; … and 49990 more problems`) });
    const tickets = await post(`/api/PF5/${PF5_A}/DealRequestByTickets`, items(1000, '"xx"'));
    expect(tickets.status).toBe(400);
    expect(tickets.body.errorDescription).toMatch(
      /^body\.0: tickets item must be an integer; .*; … and 990 more problems$/,
    );
    expect(tickets.body.errorDescription.length).toBeLessThanOrEqual(MAX_REFUSAL_LENGTH);
  });

  it('refuses a JSON body that is not UTF-8, naming the body, and sends nothing', async () => {
    const body = new Uint8Array([...Buffer.from('{"group":"demo","name":"'), 0xff, 0xfe, 0xc3, ...Buffer.from('("}')]);
    expect(await post(`${v2}/UserRecordNew`, body)).toStrictEqual({ status: 200, body: v2Refusal(NOT_UTF8_BODY) });
    expect(await post(`${v1}/UserRecordNew`, body)).toStrictEqual({ status: 400, body: v1Refusal(NOT_UTF8_BODY) });
    expect(setup.broker.frames).toStrictEqual([]);
  });

  it('refuses a broken chunked encoding and a body cut short, v2 in its envelope and v1 with 400, logged at debug level', async () => {
    const badSize = await rawExchange(
      setup.edge.url,
      `${head(`${v2}/UserRecordNew`, 'Transfer-Encoding: chunked\r\n')}zz\r\n{}\r\n0\r\n\r\n`,
    );
    expect([badSize.status, JSON.parse(badSize.body)]).toStrictEqual([200, v2Refusal(UNREADABLE_BODY)]);
    const overrun = await rawExchange(
      setup.edge.url,
      `${head(`${v1}/UserRecordNew`, 'Transfer-Encoding: chunked\r\n')}2\r\n{"group":"demo"}\r\n0\r\n\r\n`,
    );
    expect([overrun.status, JSON.parse(overrun.body)]).toStrictEqual([400, v1Refusal(UNREADABLE_BODY)]);
    // A route without a body: the chunked body is still read (and counted) before the route is reached.
    const noBody = await rawExchange(
      setup.edge.url,
      `${head(`${v2}/CfgDeleteAccess/1`, 'Transfer-Encoding: chunked\r\n')}zz\r\n`,
    );
    expect([noBody.status, JSON.parse(noBody.body)]).toStrictEqual([200, v2Refusal(UNREADABLE_BODY)]);
    const short = await rawExchange(
      setup.edge.url,
      `${head(`${v2}/UserRecordNew`, 'Content-Length: 100\r\n')}{"group":"demo"`,
    );
    expect([short.status, JSON.parse(short.body)]).toStrictEqual([200, v2Refusal(UNREADABLE_BODY)]);
    expect(setup.broker.frames).toStrictEqual([]);
    for (const answer of [badSize, overrun, noBody, short]) {
      const traceId = answer.headers.traceparent.split('-')[1];
      const logged = await until(
        () => lines.find((line) => line.includes(NOT_READ) && line.includes(traceId)),
        `the debug line of ${traceId}`,
      );
      expect(JSON.parse(logged)).toMatchObject({ level: 'debug', msg: 'request body not read to its end', traceId });
    }
    expect(lines.filter((line) => line.includes(UNHANDLED))).toEqual([]);
  });

  it('answers a token request whose body cannot be read to its end invalid_request, logged at debug level', async () => {
    const tokenHead = (framing: string) =>
      `POST /connect/token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n${framing}\r\n`;
    for (const request of [
      `${tokenHead('Transfer-Encoding: chunked\r\n')}zz\r\n`,
      `${tokenHead('Content-Length: 100\r\n')}grant_type=client_cred`,
    ]) {
      const answer = await rawExchange(setup.edge.url, request);
      expect([answer.status, JSON.parse(answer.body)]).toStrictEqual([
        400,
        { error: 'invalid_request', error_description: 'the request body could not be read to its end' },
      ]);
      const traceId = answer.headers.traceparent.split('-')[1];
      await until(
        () => lines.find((line) => line.includes(NOT_READ) && line.includes(traceId)),
        `the debug line of ${traceId}`,
      );
    }
    expect(lines.filter((line) => line.includes(UNHANDLED))).toEqual([]);
  });

  it('logs callers gone mid-body at debug level only, and keeps answering', async () => {
    const before = lines.filter((line) => line.includes(NOT_READ)).length;
    const request = `${head(`${v2}/UserRecordNew`, 'Content-Length: 1000\r\n')}{"group":"demo","name":"`;
    const token = `POST /connect/token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\ngrant_type=`;
    await Promise.all(Array.from({ length: 20 }, (_, i) => dropMidBody(setup.edge.url, i % 2 ? request : token)));
    await until(
      () => lines.filter((line) => line.includes(NOT_READ)).length >= before + 20,
      'a debug line per dropped caller',
    );
    expect(lines.filter((line) => line.includes(UNHANDLED))).toEqual([]);
    expect(setup.broker.frames).toStrictEqual([]);
    expect((await fetch(new URL('/livez', setup.edge.url))).status).toBe(200);
  });
});
