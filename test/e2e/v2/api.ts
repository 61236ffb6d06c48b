/**
 * Calls v2 operations by catalog id in end-to-end tests. Every answer is checked on the way: HTTP 200, the envelope's
 * three members, `X-Request-Timeout-Applied`, paging meta exactly on paged lists, and on success `data` validated
 * against the contract schema the entry publishes, so no test can pass on a record of the wrong shape.
 *
 * The coverage test (`shared/catalog/index.coverage.test.ts`) looks for each v2 operation id as a string literal in the files of
 * this folder: call operations by their literal id.
 */
import { expect } from 'vitest';
import { findOperation, type Operation } from '../../../shared/catalog/index.js';
import { contractErrors } from '../../support/contractSchema.js';
import type { Client, Envelope } from '../support.js';

export interface CallOptions {
  /** Path parameters other than `tradePlatform`. */
  params?: Record<string, string | number>;
  /** Query parameters; arrays are sent by repetition. */
  query?: Record<string, string | number | boolean | Array<string | number>>;
  body?: unknown;
  /** A raw body text, sent as is (for malformed JSON). */
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface Answer<T> {
  status: number;
  headers: Headers;
  body: Envelope<T>;
}

export function operation(id: string): Operation {
  const entry = findOperation(id);
  if (!entry) throw new Error(`no catalog entry ${id}`);
  return entry;
}

/** The URL of an entry on the client's demo platform of its family. */
export function urlOf(c: Client, entry: Operation, options: CallOptions = {}): string {
  const platform = entry.family === 'PF5' ? c.stack.platforms.pf5 : c.stack.platforms.pf4;
  let path = entry.path.replace('{tradePlatform}', platform);
  for (const [name, value] of Object.entries(options.params ?? {}))
    path = path.replace(`{${name}}`, encodeURIComponent(String(value)));
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(options.query ?? {})) {
    for (const v of Array.isArray(value) ? value : [value]) search.append(name, String(v));
  }
  const qs = search.toString();
  return qs ? `${path}?${qs}` : path;
}

/** Calls the operation `id` and checks the answer's envelope and, on success, its data against the contract. */
export async function call<T = any>(c: Client, id: string, options: CallOptions = {}): Promise<Answer<T>> {
  const entry = operation(id);
  const hasBody = options.body !== undefined || options.rawBody !== undefined;
  const res = await fetch(`${c.stack.edgeUrl}${urlOf(c, entry, options)}`, {
    method: entry.method,
    headers: {
      authorization: `Bearer ${c.token}`,
      ...(hasBody ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    },
    body: options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
  });
  const text = await res.text();
  let body: Envelope<T>;
  try {
    body = JSON.parse(text) as Envelope<T>;
  } catch {
    throw new Error(`${id}: not JSON (${res.status}): ${text.slice(0, 200)}`);
  }
  expect(res.status, `${id} HTTP status`).toBe(200);
  expect(Object.keys(body).sort(), `${id} envelope members`).toEqual(['data', 'error', 'meta']);
  expect(res.headers.get('x-request-timeout-applied'), `${id} X-Request-Timeout-Applied`).toMatch(/^\d+(\.\d+)?$/);
  if (body.error === null) {
    expect(contractErrors(entry, body.data), `${id} data against ${JSON.stringify(entry.response)}`).toEqual([]);
    if (entry.paged) expect(body.meta.paging, `${id} paging meta`).toBeDefined();
    else expect(body.meta, `${id} paging meta`).not.toHaveProperty('paging');
  }
  return { status: res.status, headers: res.headers, body };
}

/** Calls and expects success; answers `data`. */
export async function ok<T = any>(c: Client, id: string, options: CallOptions = {}): Promise<T> {
  const r = await call<T>(c, id, options);
  expect(r.body.error, `${id} error`).toBeNull();
  return r.body.data as T;
}

/** Calls and expects a failure envelope; answers the error. */
export async function fails(c: Client, id: string, options: CallOptions = {}): Promise<NonNullable<Envelope['error']>> {
  const r = await call(c, id, options);
  expect(r.body.error, `${id} should fail`).not.toBeNull();
  return r.body.error!;
}

/** Expects a Validation envelope whose message names `field`. */
export async function refuses(c: Client, id: string, field: string, options: CallOptions = {}): Promise<string> {
  const error = await fails(c, id, options);
  expect(error.code, `${id} refusal code`).toBe('Validation');
  expect(error.message, `${id} refusal message`).toContain(field);
  return error.message!;
}

/** Walks a paged list page by page; answers every item and the page count. */
export async function allPages<T = any>(
  c: Client,
  id: string,
  limit: number,
  options: CallOptions = {},
): Promise<{ items: T[]; pages: number }> {
  const items: T[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const r: Answer<T[]> = await call<T[]>(c, id, {
      ...options,
      query: { ...options.query, limit, ...(cursor ? { cursor } : {}) },
    });
    expect(r.body.error, `${id} page ${pages}`).toBeNull();
    items.push(...r.body.data!);
    expect(r.body.data!.length, `${id} page size`).toBeLessThanOrEqual(limit);
    cursor = r.body.meta.paging!.hasMore ? r.body.meta.paging!.nextCursor : null;
    pages++;
  } while (cursor && pages < 10_000);
  return { items, pages };
}

/**
 * A tampered cursor is a Validation error naming the cursor: one that is not base64url JSON, a well-formed one holding
 * a negative key (no login, ticket or position is), and one holding an object (no list is keyed by one).
 */
export async function refusesTamperedCursor(c: Client, id: string, options: CallOptions = {}): Promise<void> {
  const wellFormed = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
  for (const cursor of ['bm90LWEta2V5', wellFormed(-5), wellFormed({ a: 1 })]) {
    await refuses(c, id, 'cursor', { ...options, query: { ...options.query, limit: 2, cursor } });
  }
}

/**
 * A fresh account of `demo\\forex` on the demo PF4 platform, funded, with one EURUSD buy opened through the API: the
 * trade change stream tests wait for. Answers the new order and its account.
 */
export async function openTrade(c: Client, comment: string): Promise<{ order: number; login: number }> {
  const login = (
    await ok<{ login: number }>(c, 'v2.PF4.UserRecordNew', { body: { login: 0, group: 'demo\\forex', name: comment } })
  ).login;
  await ok(c, 'v2.PF4.TradeTransaction', {
    body: { tradeTransactionType: 'BrBalance', tradeCommand: 'Balance', orderBy: login, price: 100_000 },
  });
  const tx = await ok<{ order: number }>(c, 'v2.PF4.TradeTransaction', {
    body: {
      tradeTransactionType: 'BrOrderOpen',
      tradeCommand: 'Buy',
      orderBy: login,
      symbol: 'EURUSD',
      volume: 10,
      comment,
    },
  });
  return { order: tx.order, login };
}
