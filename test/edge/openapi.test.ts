/**
 * The generated OpenAPI document, as served by the edge: OpenAPI 3.1 structure, every $ref resolving, every catalog
 * operation present with its method and path parameters, and the security scheme applied where it belongs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEdge, type TestEdge } from '../support/edge.js';
import { catalog } from '../../shared/catalog/index.js';

let edge: TestEdge;
let doc: any;

beforeAll(async () => {
  edge = await startTestEdge({ seed: false });
  const res = await fetch(new URL('/openapi.json', edge.url));
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/application\/json/);
  doc = await res.json();
}, 60_000);
afterAll(async () => { await edge?.close(); });

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

describe('/openapi.json', () => {
  it('is an OpenAPI 3.1.0 document with info, paths and components', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(typeof doc.info.title).toBe('string');
    expect(typeof doc.info.version).toBe('string');
    expect(Object.keys(doc.paths).length).toBeGreaterThan(0);
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
      expect(r.startsWith('#/components/schemas/'), r).toBe(true);
      expect(doc.components.schemas[r.slice('#/components/schemas/'.length)], r).toBeDefined();
    }
  });

  it('lists every catalog operation with its method, id and declared path parameters', () => {
    const ids = new Set<string>();
    for (const entry of catalog) {
      const op = doc.paths[entry.path]?.[entry.method.toLowerCase()];
      expect(op, `${entry.method} ${entry.path}`).toBeDefined();
      expect(op.operationId).toBe(entry.id);
      expect(op.tags).toEqual([entry.tag]);
      ids.add(op.operationId);
      const declared = op.parameters.filter((p: any) => p.in === 'path').map((p: any) => p.name).sort();
      const inPath = [...entry.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      expect(declared).toEqual(inPath);
      const names = op.parameters.map((p: any) => `${p.in}:${p.name}`);
      if (entry.read !== 'local') expect(names).toEqual(expect.arrayContaining(['header:X-Request-Timeout', 'query:requestTimeout']));
      if (entry.generation === 'v2' && entry.mutating) expect(names).toContain('header:Idempotency-Key');
      if (entry.generation === 'v2' && entry.destructive) expect(op.parameters.find((p: any) => p.name === 'confirm').required).toBe(true);
      if (entry.paged) expect(names).toEqual(expect.arrayContaining(['query:limit', 'query:cursor']));
      if (entry.body) expect(op.requestBody.content['application/json'].schema).toBeTypeOf('object');
    }
    expect(ids.size).toBe(catalog.length);
  });

  it('describes v2 answers as the envelope around the operation data', () => {
    const user = doc.paths['/api/v2/PF4/{tradePlatform}/UserRecordGet/{login}'].get.responses['200'].content['application/json'].schema;
    const resolved = user.$ref ? doc.components.schemas[user.$ref.split('/').pop()] : user;
    expect(Object.keys(resolved.properties).sort()).toEqual(['data', 'error', 'meta']);
    const paged = doc.paths['/api/v2/PF4/{tradePlatform}/UsersRequest'].get.responses['200'].content['application/json'].schema;
    expect(paged.properties.data.anyOf[0]).toEqual({ type: 'array', items: { $ref: '#/components/schemas/PF4User' } });
    expect(paged.properties.meta).toEqual({ $ref: '#/components/schemas/ApiMeta' });
    const v1 = doc.paths['/api/PF4/{tradePlatform}/TradesGet/{ticket}'].get.responses;
    expect(v1['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/PF4Trade' });
    expect(v1['404'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/HTTPError' });
    for (const name of ['TradePlatform', 'Organization', 'ApiError', 'ApiMeta', 'PagingMeta']) expect(doc.components.schemas[name]).toBeDefined();
  });

  it('declares OAuth2 client credentials, applied everywhere but the open routes', () => {
    expect(doc.components.securitySchemes.oauth2).toEqual({
      type: 'oauth2',
      description: expect.any(String),
      flows: { clientCredentials: { tokenUrl: '/connect/token', scopes: { webapi: expect.any(String) } } },
    });
    expect(doc.security).toEqual([{ oauth2: ['webapi'] }]);
    for (const path of ['/connect/token', '/.well-known/openid-configuration', '/.well-known/jwks.json', '/healthz', '/livez', '/openapi.json']) {
      const item = doc.paths[path];
      expect(item, path).toBeDefined();
      for (const op of Object.values<any>(item)) expect(op.security).toEqual([]);
    }
    expect(doc.paths['/api/v2/PF4/{tradePlatform}/ServerTime'].get.security).toBeUndefined();
  });
});
