/**
 * The generated OpenAPI document, as served by the edge: a valid OpenAPI 3.1 document (checked by a real validator),
 * the document the catalog generates, every catalog operation present with its method and path parameters, inputs
 * published as what they stand for (integers with the bounds the parser enforces, numbers, booleans, date-times,
 * enums, repeated arrays), the v2 answers as the contract's named envelopes, and the token guard's 401/403 on every
 * protected operation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import SwaggerParser from '@apidevtools/swagger-parser';
import type { z } from 'zod';
import { startTestEdge, type TestEdge } from '../support/edge.js';
import { catalog, type Operation } from '../../shared/catalog/index.js';
import { contractOperations } from '../../shared/records/contractOperations.js';
import { buildOpenApiDocument } from '../../workers/openapi/document.js';

let edge: TestEdge;
let doc: any;

beforeAll(async () => {
  edge = await startTestEdge({ seed: false });
  const res = await fetch(new URL('/openapi.json', edge.url));
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/application\/json/);
  doc = await res.json();
}, 60_000);
afterAll(async () => {
  await edge?.close();
});

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

function refs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const n of node) refs(n, out);
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refs(v, out);
    }
  }
  return out;
}

/** Follows a local `$ref` (any depth of chained refs) inside the served document. */
function resolve(node: any): any {
  for (let i = 0; node?.$ref && i < 8; i++) {
    node = node.$ref
      .slice(2)
      .split('/')
      .reduce((at: any, key: string) => at?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  }
  return node;
}

const operationOf = (entry: Operation) => doc.paths[entry.path]?.[entry.method.toLowerCase()];

/** Every path and query parameter of the catalog with its zod field and its published parameter. */
function catalogParameters() {
  const out: Array<{ entry: Operation; name: string; where: 'path' | 'query'; field: z.ZodType; published: any }> = [];
  for (const entry of catalog) {
    const op = operationOf(entry);
    for (const [where, shape] of [
      ['path', entry.params?.shape],
      ['query', entry.query?.shape],
    ] as const) {
      for (const [name, field] of Object.entries<z.ZodType>(shape ?? {})) {
        // A shorter route of an operation with optional trailing segments declares defaults for the segments it lacks.
        if (where === 'path' && !entry.path.includes(`{${name}}`)) continue;
        const published = op.parameters.find((p: any) => p.in === where && p.name === name);
        out.push({ entry, name, where, field, published });
      }
    }
  }
  return out;
}

/** What the parser makes of one text value (as one repeated value for array fields). */
function parses(field: z.ZodType, text: string, array: boolean): { ok: boolean; value?: unknown } {
  const r = field.safeParse(array ? [text] : text);
  if (!r.success) return { ok: false };
  return { ok: true, value: array ? (r.data as unknown[])[0] : r.data };
}

/** Whether a field's text stands for an integer or any number, judged by what the parser accepts and answers. */
function numericKind(field: z.ZodType, array: boolean): 'integer' | 'number' | undefined {
  for (const text of ['0', '1', '2', '10', '100', '1000', '100000']) {
    const r = parses(field, text, array);
    if (!r.ok) continue;
    if (typeof r.value !== 'number') return undefined;
    return parses(field, '1.5', array).ok ? 'number' : 'integer';
  }
  return undefined;
}

/** Whether a field takes repeated values: an array under optional/default/pipe wrappers (as the edge reads it). */
function isArrayField(field: z.ZodType): boolean {
  let s: any = field;
  for (let i = 0; s && i < 8; i++) {
    const def = s._zod.def;
    if (def.type === 'array') return true;
    s = def.innerType ?? def.in;
  }
  return false;
}

/** The zod type under optional/default/nullable wrappers. */
function unwrapped(field: z.ZodType): any {
  let s: any = field;
  for (let i = 0; i < 8 && ['optional', 'default', 'nullable', 'prefault'].includes(s._zod.def.type); i++)
    s = s._zod.def.innerType;
  return s;
}

describe('/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document (swagger-parser), and the one the catalog generates', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const validated: any = await SwaggerParser.validate(structuredClone(doc));
    expect(Object.keys(validated.paths)).toEqual(Object.keys(doc.paths));
    // The edge serves exactly what the generator builds from the catalog (no stale or hand-made copy).
    expect(doc).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument())));
  });

  it('has well-formed operations: known methods, responses, parameters with schemas, required path parameters', () => {
    expect(typeof doc.info.title).toBe('string');
    expect(typeof doc.info.version).toBe('string');
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      expect(path.startsWith('/')).toBe(true);
      for (const [method, op] of Object.entries<any>(item)) {
        expect(METHODS).toContain(method);
        expect(Object.keys(op.responses).length).toBeGreaterThan(0);
        for (const p of op.parameters ?? []) {
          expect(['path', 'query', 'header', 'cookie']).toContain(p.in);
          expect(p.schema).toBeTypeOf('object');
          if (p.in === 'path') expect(p.required).toBe(true);
        }
      }
    }
  });

  it('resolves every $ref inside the document', () => {
    const all = refs(doc);
    expect(all.length).toBeGreaterThan(0);
    for (const r of all) {
      expect(r, r).toMatch(/^#\/components\/(schemas|responses|headers)\/[^/]+$/);
      expect(resolve({ $ref: r }), r).toBeTypeOf('object');
    }
  });

  it('lists every catalog operation with its method, id and declared path parameters, and nothing else under /api/', () => {
    const ids = new Set<string>();
    for (const entry of catalog) {
      const op = operationOf(entry);
      expect(op, `${entry.method} ${entry.path}`).toBeDefined();
      expect(op.operationId).toBe(entry.id);
      expect(op.tags).toEqual([entry.tag]);
      ids.add(op.operationId);
      const declared = op.parameters
        .filter((p: any) => p.in === 'path')
        .map((p: any) => p.name)
        .sort();
      const inPath = [...entry.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      expect(declared).toEqual(inPath);
      const names = op.parameters.map((p: any) => `${p.in}:${p.name}`);
      expect(names).toEqual(expect.arrayContaining(['header:X-Request-Timeout', 'query:requestTimeout']));
      for (const name of Object.keys(entry.query?.shape ?? {}))
        expect(names, `${entry.id} ${name}`).toContain(`query:${name}`);
      if (entry.generation === 'v2' && entry.mutating) expect(names).toContain('header:Idempotency-Key');
      if (entry.generation === 'v2' && entry.destructive) {
        expect(op.parameters.find((p: any) => p.name === 'confirm')).toMatchObject({
          in: 'query',
          required: true,
          schema: { type: 'boolean', enum: [true] },
        });
      }
      if (entry.paged) expect(names).toEqual(expect.arrayContaining(['query:limit', 'query:cursor']));
      if (entry.body) expect(op.requestBody.content['application/json'].schema).toBeTypeOf('object');
      else expect(op.requestBody).toBeUndefined();
    }
    expect(ids.size).toBe(catalog.length);
    const served = Object.entries<any>(doc.paths)
      .filter(([path]) => path.startsWith('/api/'))
      .flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    expect(served).toEqual(catalog.map((e) => `${e.method} ${e.path}`).sort());
  });

  it('publishes integer path and query fields as integers whose bounds are exactly the ones the parser enforces', () => {
    let checked = 0;
    for (const { entry, name, where, field, published } of catalogParameters()) {
      const at = `${entry.id} ${where}:${name}`;
      expect(published, at).toBeDefined();
      const array = isArrayField(field);
      expect(published.schema.type === 'array', `${at} is published as an array exactly when repeated`).toBe(array);
      if (numericKind(field, array) !== 'integer') continue;
      checked++;
      const schema = array ? published.schema.items : published.schema;
      if (array) expect(published, at).toMatchObject({ style: 'form', explode: true });
      expect(schema.type, at).toBe('integer');
      expect(schema.format, at).toMatch(/^int(32|64)$/);
      expect(Number.isSafeInteger(schema.minimum), at).toBe(true);
      // An int64 without a maximum is bounded by its format (the exact 2^63 − 1 is not a JSON double).
      if (schema.maximum === undefined) expect(schema.format, `${at} has a maximum or is an int64`).toBe('int64');
      else expect(Number.isSafeInteger(schema.maximum), at).toBe(true);
      const maximum = schema.maximum === undefined ? 9223372036854775807n : BigInt(schema.maximum);
      expect(parses(field, String(schema.minimum), array).ok, `${at} accepts its minimum`).toBe(true);
      expect(parses(field, String(schema.minimum - 1), array).ok, `${at} refuses below its minimum`).toBe(false);
      expect(parses(field, String(maximum), array).ok, `${at} accepts its maximum`).toBe(true);
      expect(parses(field, String(maximum + 1n), array).ok, `${at} refuses above its maximum`).toBe(false);
      if (schema.format === 'int32') expect(schema.maximum, at).toBeLessThanOrEqual(2147483647);
    }
    expect(checked).toBeGreaterThan(0);

    // The spec's named fields, as published.
    const param = (path: string, method: string, name: string) =>
      doc.paths[path][method].parameters.find((p: any) => p.name === name);
    const int32 = { type: 'integer', format: 'int32', minimum: 1, maximum: 2147483647 };
    expect(param('/api/v2/PF4/{tradePlatform}/UserRecordGet/{login}', 'get', 'login').schema).toEqual(int32);
    expect(param('/api/v2/PF4/{tradePlatform}/UsersRequest', 'get', 'limit')).toMatchObject({
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: 5000 },
    });
    expect(param('/api/PF4/{tradePlatform}/TradesGet/{ticket}', 'get', 'ticket').schema).toEqual(int32);
    for (const entry of catalog.filter((e) => e.family === 'PF5' && e.params?.shape.login)) {
      expect(operationOf(entry).parameters.find((p: any) => p.name === 'login').schema, entry.id).toEqual({
        type: 'integer',
        format: 'int64',
        minimum: 1,
      });
    }
    for (const { entry, name, published } of catalogParameters()) {
      if (name === 'pos') expect(published.schema, entry.id).toMatchObject({ type: 'integer', minimum: 0 });
      if (name === 'shift' || name === 'timestamp')
        expect(published.schema.type, `${entry.id} ${name}`).toBe('integer');
      if (name === 'logins' || name === 'orders') {
        expect(published, `${entry.id} ${name}`).toMatchObject({
          style: 'form',
          explode: true,
          schema: { type: 'array', items: { type: 'integer', minimum: 1 } },
        });
      }
    }
  });

  it('publishes number, boolean, date-time and enum fields as such, never as the text they arrive in', () => {
    const seen = { number: 0, boolean: 0, dateTime: 0, enum: 0 };
    for (const { entry, name, where, field, published } of catalogParameters()) {
      const at = `${entry.id} ${where}:${name}`;
      const array = isArrayField(field);
      const schema = array ? published.schema.items : published.schema;
      if (numericKind(field, array) === 'number') {
        seen.number++;
        expect(schema, at).toMatchObject({ type: 'number' });
        expect(parses(field, '1.5', array), at).toEqual({ ok: true, value: 1.5 });
      }
      const yes = parses(field, 'true', array);
      if (yes.ok && yes.value === true) {
        seen.boolean++;
        expect(schema.type, at).toBe('boolean');
        if (!schema.enum) expect(parses(field, 'false', array), at).toEqual({ ok: true, value: false });
      }
      const iso = parses(field, '2024-01-02T03:04:05Z', array);
      if (iso.ok && typeof iso.value === 'string' && !parses(field, 'not-a-time', array).ok) {
        seen.dateTime++;
        expect(schema, at).toMatchObject({ type: 'string', format: 'date-time' });
      }
      const inner = unwrapped(field);
      const listed = resolve(schema).enum as unknown[] | undefined;
      if (inner._zod.def.type === 'enum') {
        seen.enum++;
        expect(listed, at).toEqual(Object.values(inner._zod.def.entries));
      } else if (resolve(schema).type === 'string' && Array.isArray(listed) && listed.length > 0) {
        // A contract enum read in any case: each member, however it is written, parses into its own spelling.
        seen.enum++;
        for (const member of listed as string[]) {
          expect(parses(field, member.toUpperCase(), array), `${at} reads ${member.toUpperCase()}`).toMatchObject({
            ok: true,
          });
          const value = (parses(field, member, array) as { value: unknown }).value;
          expect(Array.isArray(value) ? value[0] : value, `${at} keeps ${member}`).toBe(member);
        }
      }
      if (schema.enum)
        for (const member of schema.enum)
          expect(parses(field, String(member), array).ok, `${at} accepts ${member}`).toBe(true);
      // Whatever parses into a number or a boolean is never published as a string.
      const one = parses(field, '1', array);
      if (one.ok && typeof one.value !== 'string') expect(schema.type, at).not.toBe('string');
    }
    expect(seen.boolean).toBeGreaterThan(0);
    expect(seen.dateTime).toBeGreaterThan(0);
    expect(seen.enum).toBeGreaterThan(0);
    for (const entry of catalog.filter((e) => e.generation === 'v2' && e.destructive)) {
      expect(operationOf(entry).parameters.find((p: any) => p.name === 'confirm').schema, entry.id).toEqual({
        type: 'boolean',
        enum: [true],
      });
    }
  });

  it('refers to contract records by $ref where a body is one', () => {
    const components = new Set(Object.keys(doc.components.schemas));
    let recordBodies = 0;
    for (const entry of catalog.filter((e) => e.body)) {
      const schema = operationOf(entry).requestBody.content['application/json'].schema;
      if (schema.$ref) {
        recordBodies++;
        expect(components.has(schema.$ref.split('/').pop()), entry.id).toBe(true);
        expect(Object.keys(schema), entry.id).toEqual(['$ref']);
      }
    }
    expect(recordBodies).toBeGreaterThan(0);
  });

  it("describes v2 answers as the contract's named envelope of the operation", () => {
    const shape = (p: string) => p.replace(/\{\w+\}/g, '{}');
    let named = 0;
    for (const entry of catalog.filter((e) => e.generation === 'v2')) {
      const schema = operationOf(entry).responses['200'].content['application/json'].schema;
      const contract = contractOperations.find((o) => o.method === entry.method && shape(o.path) === shape(entry.path));
      if (contract && (typeof entry.response === 'string' || 'type' in entry.response)) {
        named++;
        expect(schema, entry.id).toEqual({ $ref: `#/components/schemas/${contract.response}` });
      } else {
        // Any JSON (the contract's JsonNode is a serializer type, not the payload): the envelope inline.
        expect(Object.keys(resolve(schema).properties).sort(), entry.id).toEqual(['data', 'error', 'meta']);
      }
    }
    expect(named).toBeGreaterThan(0);
    const user = resolve(
      doc.paths['/api/v2/PF4/{tradePlatform}/UserRecordGet/{login}'].get.responses['200'].content['application/json']
        .schema,
    );
    expect(user.properties.data).toEqual({ anyOf: [{ $ref: '#/components/schemas/PF4User' }, { type: 'null' }] });
    const v1 = doc.paths['/api/PF4/{tradePlatform}/TradesGet/{ticket}'].get.responses;
    expect(v1['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/PF4Trade' });
    expect(v1['404'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/HTTPError' });
    for (const name of ['TradePlatform', 'Organization', 'ApiError', 'ApiMeta', 'PagingMeta', 'OAuthError'])
      expect(doc.components.schemas[name]).toBeDefined();
  });

  it('documents 401 and 403 with WWW-Authenticate on every protected operation, and X-Request-Timeout-Applied on every answer', () => {
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        const at = `${method} ${path}`;
        if (!path.startsWith('/api/')) {
          expect(op.security, at).toEqual([]);
          continue;
        }
        const entry = catalog.find((e) => e.path === path && e.method.toLowerCase() === method)!;
        expect(op.security, at).toEqual([{ oauth2: [entry.scope] }]);
        for (const [status, error] of [
          ['401', 'invalid_token'],
          ['403', 'insufficient_scope'],
        ]) {
          const response = resolve(op.responses[status]);
          expect(response, `${at} ${status}`).toBeDefined();
          expect(resolve(response.headers['WWW-Authenticate'])).toMatchObject({
            required: true,
            schema: { type: 'string' },
          });
          expect(resolve(response.headers['X-Request-Timeout-Applied']).schema).toMatchObject({
            type: 'number',
            minimum: 1,
            maximum: 300,
          });
          const body = resolve(response.content['application/json'].schema);
          expect(body.required).toEqual(['error', 'error_description']);
          expect(body.properties.error.enum).toContain(error);
        }
        for (const [status, response] of Object.entries<any>(op.responses)) {
          expect(resolve(resolve(response).headers?.['X-Request-Timeout-Applied']), `${at} ${status}`).toBeDefined();
        }
      }
    }
  });

  it('declares OAuth2 client credentials, applied everywhere but the open routes, with the scope each operation needs', () => {
    expect(doc.components.securitySchemes.oauth2).toEqual({
      type: 'oauth2',
      description: expect.any(String),
      flows: {
        clientCredentials: {
          tokenUrl: '/connect/token',
          scopes: {
            webapi: expect.any(String),
            'webapi.write': expect.any(String),
            'webapi.admin': expect.any(String),
            'webapi.audit': expect.any(String),
            'webapi.webhooks': expect.any(String),
          },
        },
      },
    });
    expect(doc.security).toEqual([{ oauth2: ['webapi'] }]);
    for (const path of [
      '/connect/token',
      '/.well-known/openid-configuration',
      '/.well-known/jwks.json',
      '/healthz',
      '/livez',
      '/openapi.json',
    ]) {
      const item = doc.paths[path];
      expect(item, path).toBeDefined();
      for (const op of Object.values<any>(item)) expect(op.security).toEqual([]);
    }
    expect(doc.paths['/api/v2/PF4/{tradePlatform}/ServerTime'].get.security).toEqual([{ oauth2: ['webapi'] }]);
    expect(doc.paths['/api/v2/PF4/{tradePlatform}/UserRecordNew'].post.security).toEqual([
      { oauth2: ['webapi.write'] },
    ]);
    expect(doc.paths['/api/v2/PF4/{tradePlatform}/SrvRestart'].post.security).toEqual([{ oauth2: ['webapi.admin'] }]);
  });
});
