/**
 * Property-based fuzzing of every catalog route (fast-check): requests with arbitrary path parameters (valid, wrong,
 * control characters, lone surrogates, huge, percent-encoded junk), query parameters (declared and not), bodies
 * (none, any JSON, malformed text, deep nesting, wrong types, arrays past the edge's bound, large bodies wrong in
 * every item, bytes that are not UTF-8) and control headers (time budget, Idempotency-Key, confirm), sent to the real
 * worker. What must hold for every one: a v2 route answers HTTP 200 with the `{data, error, meta}` envelope and a
 * contract error code; a v1 or registry route never answers a 5xx (the broker here answers everything, so a 5xx can
 * only be the edge failing on bad input); every answer is JSON; a refusal's message stays within the edge's bound
 * however large the body. The worker still answers /livez afterwards. Used by the short run in `npm test` and the
 * long one in `npm run drill:fuzz`.
 *
 * Framing that fetch cannot send (a broken chunked encoding, a body cut short, a caller gone mid-body) goes over a
 * raw socket: `rawExchange` and `dropMidBody`.
 */
import fc from 'fast-check';
import { connect } from 'node:net';
import { catalog, type Operation } from '../../shared/catalog/index.js';
import { WEB_API_ERROR_CODES } from '../../shared/errors.js';
import { PF4_A, PF5_A } from '../support/edge.js';
import { MAX_BODY_ARRAY_ITEMS, MAX_MESSAGE_LENGTH } from '../../shared/catalog/inputs.js';

/** The routes the edge serves: every catalog entry (registry ones included). */
export const fuzzedRoutes = (): Operation[] => [...catalog];

const LONE = ['\ud800', '\udfff', 'a\ud83d', '\ude42b'];
const CONTROL = ['\u0000', '\u0007', '\n', '\r\n', '\u001b[31m', '\u007f', '\u0085'];

/** Text a field should refuse or handle: anything unicode, control characters, lone surrogates, numbers, long runs. */
const hostileText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ maxLength: 12 }),
  fc.constantFrom(
    '',
    ' ',
    '0',
    '-1',
    '007',
    '2147483648',
    '9007199254740993',
    '1e309',
    'NaN',
    'true',
    'null',
    '..',
    '%',
    '%zz',
    '*',
    '!',
  ),
  fc
    .tuple(fc.string({ maxLength: 6 }), fc.constantFrom(...CONTROL, ...LONE), fc.string({ maxLength: 6 }))
    .map(([a, b, c]) => a + b + c),
  fc.integer({ min: 1, max: 2000 }).map((n) => 'x'.repeat(n)),
  fc.integer().map(String),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
);

const platformFor = (entry: Operation) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant(entry.family === 'PF5' ? PF5_A : PF4_A) },
    { weight: 1, arbitrary: fc.constant((entry.family === 'PF5' ? PF5_A : PF4_A).toUpperCase()) },
    { weight: 1, arbitrary: fc.constant(entry.family === 'PF5' ? PF4_A : PF5_A) },
    { weight: 1, arbitrary: fc.uuid() },
    { weight: 1, arbitrary: hostileText },
  );

/** Member names the catalog's bodies use for lists and records: a large value there reaches the schema's items. */
const LIST_MEMBERS = ['logins', 'rates', 'notifyLogins', 'sessionQuote', 'tickets', 'params', 'x'];

/** An array of `n` copies of `item`, alone or as the value of a list member. */
const arrayText = (n: number, item: string, member: string | null) => {
  const items = `[${`${item},`.repeat(n - 1)}${item}]`;
  return member === null ? items : `{${JSON.stringify(member)}:${items}}`;
};

/** Bytes that are not UTF-8, inside a JSON string of an otherwise well-formed body. */
const NOT_UTF8 = [[0xff], [0xc3, 0x28], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xc0, 0xaf]];

/** A JSON body that is wrong in every way a body can be. */
const hostileBody: fc.Arbitrary<string | Uint8Array<ArrayBuffer>> = fc.oneof(
  { weight: 8, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)) },
  {
    weight: 4,
    arbitrary: fc
      .dictionary(
        fc.string({ maxLength: 12 }),
        fc.oneof(hostileText, fc.integer(), fc.double(), fc.boolean(), fc.constant(null)),
        { maxKeys: 6 },
      )
      .map((v) => JSON.stringify(v)),
  },
  { weight: 2, arbitrary: fc.string({ maxLength: 60 }) }, // mostly not JSON at all
  { weight: 2, arbitrary: fc.integer({ min: 20, max: 20_000 }).map((n) => '['.repeat(n) + ']'.repeat(n)) },
  { weight: 2, arbitrary: fc.constantFrom('{', '{"a":', '"\\ud800"', '{"name":"\\u0000"}', 'null', '[]', '""') },
  // Past the edge's bound on array items.
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.integer({ min: MAX_BODY_ARRAY_ITEMS + 1, max: MAX_BODY_ARRAY_ITEMS + 20_000 }),
        fc.constantFrom('1', '"x"', '{}', '[]', 'null'),
        fc.option(fc.constantFrom(...LIST_MEMBERS), { nil: null }),
      )
      .map(([n, item, member]) => arrayText(n, item, member)),
  },
  // Large and wrong in every item: the refusal must stay short.
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.integer({ min: 5_000, max: 60_000 }),
        fc.constantFrom('"x"', '{}', '[]', 'true', '-1.5'),
        fc.option(fc.constantFrom(...LIST_MEMBERS), { nil: null }),
      )
      .map(([n, item, member]) => arrayText(n, item, member)),
  },
  // Not UTF-8.
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom(...NOT_UTF8), fc.constantFrom('name', 'group', 'symbol', 'comment'))
      .map(
        ([bad, member]) =>
          new Uint8Array([...Buffer.from(`{"group":"demo","${member}":"a`), ...bad, ...Buffer.from('b"}')]),
      ),
  },
);

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array<ArrayBuffer>;
}

/** Requests addressed to one route. */
export function requestsFor(entry: Operation): fc.Arbitrary<FuzzRequest> {
  const params = [...entry.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  const declaredQuery = entry.query ? Object.keys(entry.query.shape) : [];
  const queryKeys = fc.constantFrom(...declaredQuery, 'limit', 'cursor', 'confirm', 'requestTimeout', 'zz');
  return fc
    .record({
      values: fc.tuple(...params.map((p) => (p === 'tradePlatform' ? platformFor(entry) : hostileText))),
      query: fc.array(fc.tuple(queryKeys, hostileText), { maxLength: 5 }),
      confirm: fc.boolean(),
      body: fc.option(hostileBody, { nil: undefined }),
      timeout: fc.option(fc.constantFrom('0', '1', '10', '301', 'abc', '5.5', '-3'), { nil: undefined }),
      key: fc.option(
        fc.string({
          unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
          minLength: 0,
          maxLength: 300,
        }),
        { nil: undefined },
      ),
      otherMethod: fc.integer({ min: 0, max: 19 }),
    })
    .map(({ values, query, confirm, body, timeout, key, otherMethod }) => {
      let i = 0;
      const path = entry.path.replace(/\{(\w+)\}/g, () => encodeSegment(values[i++]));
      const search = new URLSearchParams();
      for (const [k, v] of query) search.append(k, v);
      if (confirm) search.set('confirm', 'true');
      const headers: Record<string, string> = {};
      if (body !== undefined) headers['content-type'] = 'application/json';
      if (timeout !== undefined) headers['x-request-timeout'] = timeout;
      if (key !== undefined) headers['idempotency-key'] = key;
      // Now and then the wrong method on the right path.
      const method = otherMethod === 0 ? (entry.method === 'GET' ? 'POST' : 'GET') : entry.method;
      return {
        method,
        path: `${path}${search.size ? `?${search}` : ''}`,
        headers,
        body: method === 'GET' ? undefined : body,
      };
    });
}

/**
 * A path segment percent-encoded; a lone surrogate (which encodeURIComponent refuses) goes as its three generalized
 * UTF-8 bytes, which is what a careless client would send: invalid UTF-8 on the wire.
 */
function encodeSegment(text: string): string {
  let out = '';
  for (const ch of text) {
    const unit = ch.charCodeAt(0);
    if (ch.length === 1 && unit >= 0xd800 && unit <= 0xdfff) {
      out += [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join('');
    } else {
      out += encodeURIComponent(ch);
    }
  }
  return out;
}

const ERROR_CODES: ReadonlySet<string> = new Set(WEB_API_ERROR_CODES);

/** The longest refusal message the edge writes: its listed problems, then "; … and N more problems". */
export const MAX_REFUSAL_LENGTH = MAX_MESSAGE_LENGTH + '; … and 9007199254740991 more problems'.length;

/** Why an answer breaks the properties, or null when it keeps them. */
export function answerProblem(entry: Operation, status: number, text: string): string | null {
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return `not JSON (HTTP ${status}): ${text.slice(0, 200)}`;
  }
  if (entry.generation === 'v2') {
    if (status !== 200) return `v2 answered HTTP ${status}: ${text.slice(0, 200)}`;
    if (!body || typeof body !== 'object' || !('data' in body) || !('error' in body) || !('meta' in body))
      return `v2 answered no envelope: ${text.slice(0, 200)}`;
    if (body.error !== null && !ERROR_CODES.has(body.error?.code))
      return `v2 error code ${JSON.stringify(body.error?.code)} is not a contract code`;
    if (typeof body.meta?.activityId !== 'string') return 'v2 envelope without meta.activityId';
    if (body.error?.code === 'Validation' && String(body.error.message).length > MAX_REFUSAL_LENGTH)
      return `v2 refusal of ${String(body.error.message).length} characters`;
    return null;
  }
  if (status >= 500) return `${entry.generation} answered HTTP ${status}: ${text.slice(0, 200)}`;
  if (body?.errorType === 'Validation' && String(body.errorDescription).length > MAX_REFUSAL_LENGTH)
    return `v1 refusal of ${String(body.errorDescription).length} characters`;
  return null;
}

/** Runs `runs` requests against one route; throws fast-check's counterexample report on the first broken property. */
export async function fuzzRoute(
  base: URL,
  token: string,
  entry: Operation,
  runs: number,
  seed?: number,
): Promise<void> {
  await fc.assert(
    fc.asyncProperty(requestsFor(entry), async (req) => {
      const res = await fetch(new URL(req.path, base), {
        method: req.method,
        body: req.body,
        headers: { authorization: `Bearer ${token}`, ...req.headers },
        signal: AbortSignal.timeout(20_000),
      });
      const text = await res.text();
      // The wrong method on a path may be another route's (or none): only the envelope promise of v2 paths holds then.
      const addressed =
        req.method === entry.method
          ? entry
          : { ...entry, generation: entry.path.startsWith('/api/v2/') ? ('v2' as const) : ('v1' as const) };
      const problem = answerProblem(addressed, res.status, text);
      if (problem) throw new Error(`${req.method} ${req.path}: ${problem}`);
    }),
    { numRuns: runs, seed, endOnFailure: true },
  );
}

/** Token endpoint requests: arbitrary form bodies, content types and Authorization headers. */
export const tokenRequests = fc.record({
  body: fc.oneof(
    fc.string({ maxLength: 200 }),
    fc
      .dictionary(fc.constantFrom('grant_type', 'client_id', 'client_secret', 'scope', 'x'), hostileText)
      .map((d) => new URLSearchParams(d).toString()),
  ),
  contentType: fc.constantFrom('application/x-www-form-urlencoded', 'application/json', 'text/plain', ''),
  authorization: fc.option(
    fc.oneof(
      fc.constant('Basic '),
      fc
        .string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 80 })
        .map((s) => `Basic ${s}`),
      fc.base64String({ maxLength: 60 }).map((s) => `Basic ${s}`),
    ),
    { nil: undefined },
  ),
});

/** An answer read off a raw socket. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends `request` as it is on a new connection to the edge, closes its sending side, and reads the answer (framed by
 * its Content-Length): for framing fetch will not send.
 */
export function rawExchange(base: URL, request: string | Uint8Array): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(base.port), base.hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('no answer within 10 s'));
    }, 10_000);
    const answer = (): RawAnswer | null => {
      const all = Buffer.concat(chunks);
      const end = all.indexOf('\r\n\r\n');
      if (end < 0) return null;
      const [statusLine, ...lines] = all.subarray(0, end).toString('latin1').split('\r\n');
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      const body = all.subarray(end + 4);
      if (body.length < Number(headers['content-length'] ?? 0)) return null;
      return { status: Number(statusLine.split(' ')[1]), headers, body: body.toString('utf8') };
    };
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      const done = answer();
      if (done) {
        clearTimeout(timer);
        socket.destroy();
        resolve(done);
      }
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const done = answer();
      if (done) resolve(done);
      else
        reject(
          new Error(
            `connection closed without a whole answer: ${Buffer.concat(chunks).toString('latin1').slice(0, 200)}`,
          ),
        );
    });
    socket.end(request);
  });
}

/** Sends the head of a request and part of its body, then drops the connection (a caller gone mid-body). */
export function dropMidBody(base: URL, request: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(base.port), base.hostname);
    socket.on('error', reject);
    socket.on('close', () => resolve());
    socket.write(request, () => setTimeout(() => socket.destroy(), 50));
  });
}
