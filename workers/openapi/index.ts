/** The OpenAPI 3.1 document, generated from the catalog once per isolate and served as is. */
import type { Context } from 'hono';
import type { AppEnv } from '../env.js';
import { buildOpenApiDocument } from './document.js';

export { buildOpenApiDocument, pathParamNames } from './document.js';

let cached: string | undefined;

export function openApiJson(c: Context<AppEnv>): Response {
  cached ??= JSON.stringify(buildOpenApiDocument());
  return c.body(cached, 200, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'public, max-age=300',
  });
}
