/**
 * Calls v1 operations by catalog id in end-to-end tests. v1 answers the bare record or list with HTTP 200 on success
 * and an HTTP error status with a v1 error body otherwise. Every answer is checked on the way:
 * `X-Request-Timeout-Applied` is present; a 200 body validates against the schema the entry publishes (a contract
 * record, a list of them, an inline schema, or a record the edge defines in the OpenAPI components); an error body is
 * the general v1 body (`errorType`, `errorCode`, `errorDescription`) or, for a PF5 platform failure, `PF5Error`
 * (with `requestId`); no answer is a 5xx other than 503/504.
 *
 * The coverage test (`shared/catalog/index.coverage.test.ts`) looks for each v1 operation id as a string literal in the files of
 * this folder: call operations by their literal id (`'v1.PF4.UserRecordGet'`).
 */
import { expect } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import { findOperation, type Operation } from '../../../shared/catalog/index.js';
import { openapiComponents } from '../../../shared/records/contract.js';
import { buildOpenApiDocument } from '../../../workers/openapi/document.js';
import { contractErrors } from '../../support/contractSchema.js';
import type { Client } from '../support.js';

export interface CallOptions {
  /** Path parameters other than `tradePlatform`. */
  params?: Record<string, string | number | bigint>;
  /** Query parameters; arrays are sent by repetition. */
  query?: Record<string, string | number | bigint | boolean | Array<string | number | bigint>>;
  body?: unknown;
  /** A raw body text, sent as is (for malformed JSON or int64 values beyond 2^53). */
  rawBody?: string;
  headers?: Record<string, string>;
}

/** The general v1 error body, or PF5Error (with `requestId`) for a PF5 platform failure. */
export interface V1Error {
  errorType: string;
  errorCode: string | number;
  errorDescription: string | null;
  requestId?: string;
}

export interface V1Answer<T = any> {
  status: number;
  headers: Headers;
  /** The parsed body (numbers beyond 2^53 lose precision here: read `text` for exact int64 values). */
  body: T;
  /** The body as sent. */
  text: string;
}

export function operation(id: string): Operation {
  const entry = findOperation(id);
  if (!entry) throw new Error(`no catalog entry ${id}`);
  if (entry.generation !== 'v1') throw new Error(`${id} is not a v1 operation`);
  return entry;
}

/** The URL of an entry on the client's demo platform of its family; every path parameter must be given. */
export function urlOf(c: Client, entry: Operation, options: CallOptions = {}): string {
  const platform = entry.family === 'PF5' ? c.stack.platforms.pf5 : c.stack.platforms.pf4;
  let path = entry.path.replace('{tradePlatform}', platform);
  for (const [name, value] of Object.entries(options.params ?? {}))
    path = path.replace(`{${name}}`, encodeURIComponent(String(value)));
  const missing = path.match(/\{\w+\}/);
  if (missing) throw new Error(`${entry.id}: path parameter ${missing[0]} not given`);
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(options.query ?? {})) {
    for (const v of Array.isArray(value) ? value : [value]) search.append(name, String(v));
  }
  const qs = search.toString();
  return qs ? `${path}?${qs}` : path;
}

/** Records the edge defines beside the contract (in the OpenAPI components), validated from the published document. */
const ajv = new Ajv2020({ strict: false, allErrors: true });
(formats as unknown as (a: Ajv2020) => void)(ajv);
for (const f of ['int32', 'int64', 'double', 'float', 'byte']) ajv.addFormat(f, true);
let documentLoaded = false;
const compiled = new Map<string, ValidateFunction>();

function edgeRecordErrors(name: string, list: boolean, data: unknown): string[] {
  if (!documentLoaded) {
    const schemas = (buildOpenApiDocument() as { components: { schemas: Record<string, unknown> } }).components.schemas;
    ajv.addSchema({ $id: 'https://document.local/', components: { schemas } });
    documentLoaded = true;
  }
  const key = `${name}${list ? '[]' : ''}`;
  let validate = compiled.get(key);
  if (!validate) {
    const ref = { $ref: `https://document.local/#/components/schemas/${name}` };
    compiled.set(key, (validate = ajv.compile(list ? { type: 'array', items: ref } : ref)));
  }
  if (validate(data)) return [];
  return (validate.errors ?? [])
    .slice(0, 10)
    .map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
}

/** Validation errors of a success body against the entry's published response schema; empty when valid. */
export function responseErrors(entry: Operation, data: unknown): string[] {
  if (typeof entry.response === 'string') {
    const list = entry.response.endsWith('[]');
    const name = list ? entry.response.slice(0, -2) : entry.response;
    if (!(name in openapiComponents)) return edgeRecordErrors(name, list, data);
  }
  return contractErrors(entry, data);
}

/** Calls the v1 operation `id`; checks the time budget header, the success body's schema and the error body's shape. */
export async function call<T = any>(c: Client, id: string, options: CallOptions = {}): Promise<V1Answer<T>> {
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
  let body: T;
  try {
    body = JSON.parse(text) as T;
  } catch {
    throw new Error(`${id}: not JSON (${res.status}): ${text.slice(0, 200)}`);
  }
  expect(res.headers.get('x-request-timeout-applied'), `${id} X-Request-Timeout-Applied`).toMatch(/^\d+(\.\d+)?$/);
  expect(
    res.status >= 500 && res.status !== 503 && res.status !== 504,
    `${id} answered ${res.status}: ${text.slice(0, 300)}`,
  ).toBe(false);
  if (res.status === 200) {
    expect(responseErrors(entry, body), `${id} body against ${JSON.stringify(entry.response)}`).toEqual([]);
  } else {
    const error = body as unknown as V1Error;
    const keys = Object.keys(error ?? {}).sort();
    const pf5 = error?.errorType === 'PF5API';
    expect(keys, `${id} v1 error body (${res.status})`).toEqual(
      pf5
        ? ['errorCode', 'errorDescription', 'errorType', 'requestId']
        : ['errorCode', 'errorDescription', 'errorType'],
    );
    if (pf5) expect(entry.family, `${id} PF5Error from a PF5 route`).toBe('PF5');
  }
  return { status: res.status, headers: res.headers, body, text };
}

/** Calls and expects 200; answers the bare body. */
export async function ok<T = any>(c: Client, id: string, options: CallOptions = {}): Promise<T> {
  const r = await call<T>(c, id, options);
  expect(r.status, `${id} status: ${r.text.slice(0, 300)}`).toBe(200);
  return r.body;
}

/** Calls and expects the HTTP error `status`; answers the v1 error body. */
export async function fails(c: Client, id: string, status: number, options: CallOptions = {}): Promise<V1Error> {
  const r = await call<V1Error>(c, id, options);
  expect(r.status, `${id} status: ${r.text.slice(0, 300)}`).toBe(status);
  return r.body;
}

/** Expects 400 with a Validation body whose description names `field`. */
export async function refuses(c: Client, id: string, field: string, options: CallOptions = {}): Promise<string> {
  const error = await fails(c, id, 400, options);
  expect(error.errorType, `${id} refusal type`).toBe('Validation');
  expect(error.errorCode, `${id} refusal code`).toBe('Validation');
  expect(error.errorDescription, `${id} refusal description`).toContain(field);
  return error.errorDescription!;
}

/** Expects 404 (the general body, or the platform's body naming the manager code when the server said so). */
export async function notFound(c: Client, id: string, options: CallOptions = {}): Promise<V1Error> {
  return fails(c, id, 404, options);
}

/** Expects the platform's refusal: 400 with `errorType` PF4API (or PF5API) and the result code's name. */
export async function platformRefuses(
  c: Client,
  id: string,
  codeName: string,
  options: CallOptions = {},
): Promise<V1Error> {
  const entry = operation(id);
  const error = await fails(c, id, 400, options);
  expect(error.errorType, `${id} error type`).toBe(entry.family === 'PF5' ? 'PF5API' : 'PF4API');
  expect(error.errorCode, `${id} error code`).toBe(codeName);
  return error;
}
