/**
 * The OpenAPI 3.1 document of the gateway, generated from the operation catalog so that the routes, their inputs and
 * the published description cannot drift apart. Record schemas come from the generated contract components; input
 * schemas are converted from the catalog's zod schemas as the caller sends them (`io: 'input'`).
 */
import { z } from 'zod';
import { catalog, TIMEOUT_CLASSES, TIMEOUT_MAX_S, TIMEOUT_MIN_S, PAGE_LIMIT_MAX, type Operation } from '../../shared/catalog/index.js';
import { openapiComponents } from '../../shared/records/contract.js';

type Schema = Record<string, unknown>;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const nullable = (s: Schema) => ({ anyOf: [s, { type: 'null' }] });

/** Records the edge itself defines: registry records, v1 error bodies, and the envelope parts if the contract lacks them. */
const EDGE_SCHEMAS: Record<string, Schema> = {
  TradePlatformType: { type: 'string', enum: ['PF4', 'PF5', 'PFOther'] },
  Organization: {
    type: 'object', required: ['id', 'created'],
    properties: { id: { type: 'string', format: 'uuid' }, name: { type: ['string', 'null'] }, created: { type: 'string', format: 'date-time' } },
  },
  TradePlatform: {
    type: 'object', required: ['id', 'type', 'organizationId', 'created'],
    properties: {
      id: { type: 'string', format: 'uuid' }, name: { type: ['string', 'null'] }, type: ref('TradePlatformType'),
      organizationId: { type: 'string', format: 'uuid' }, organization: ref('Organization'), created: { type: 'string', format: 'date-time' },
    },
  },
  PingResult: {
    type: 'object', description: 'Round trip of a Ping through the platform\'s manager session.',
    properties: {
      ok: { type: 'boolean' },
      roundTripMs: { type: 'number', format: 'double', description: 'milliseconds from the broker to the trading server and back' },
      serverTime: { type: ['string', 'null'], format: 'date-time' },
    },
  },
  HTTPError: {
    type: 'object', description: 'General v1 error body. With errorType PF4API the code and description are the PF4 manager result.',
    properties: { errorType: { type: 'string' }, errorCode: { type: ['string', 'integer'] }, errorDescription: { type: ['string', 'null'] } },
  },
  PF5Error: {
    type: 'object', description: 'v1 PF5 platform failure.',
    properties: {
      errorDescription: { type: ['string', 'null'] }, errorCode: { type: ['string', 'integer'] },
      errorType: { type: 'string', enum: ['PF5API'] }, requestId: { type: 'string', format: 'uuid' },
    },
  },
  ApiError: {
    type: 'object', required: ['code', 'managerCode', 'message'],
    properties: { code: ref('WebApiErrorCode'), managerCode: { type: ['string', 'integer', 'null'] }, message: { type: ['string', 'null'] } },
  },
  PagingMeta: {
    type: 'object', required: ['nextCursor', 'hasMore'],
    properties: { nextCursor: { type: ['string', 'null'] }, hasMore: { type: 'boolean' } },
  },
  ApiMeta: {
    type: 'object', properties: { activityId: { type: ['string', 'null'] }, paging: ref('PagingMeta') },
  },
  HealthReport: {
    type: 'object',
    properties: {
      status: { enum: ['ok', 'degraded'] }, edge: { enum: ['up'] }, broker: { enum: ['up', 'down'] },
      platforms: { type: 'object', additionalProperties: { enum: ['up', 'down', 'unknown'] } },
    },
  },
};

/** Contract components win, except where the edge's own shapes are what it actually answers. */
const EDGE_OVERRIDES = new Set(['ApiError', 'PagingMeta', 'ApiMeta']);

export function buildOpenApiDocument(): Schema {
  const schemas: Record<string, Schema> = { ...(openapiComponents as Record<string, Schema>) };
  for (const [name, s] of Object.entries(EDGE_SCHEMAS)) if (!schemas[name] || EDGE_OVERRIDES.has(name)) schemas[name] = s;

  const paths: Record<string, Record<string, unknown>> = { ...edgePaths() };
  for (const entry of catalog) {
    (paths[entry.path] ??= {})[entry.method.toLowerCase()] = operation(entry, schemas);
  }
  const tags = [...new Set([...catalog.map((e) => e.tag), 'Authentication', 'Health'])].sort().map((name) => ({ name }));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Trade Platform Web Interface',
      version: '2.0.0-beta',
      description: 'HTTP/JSON gateway in front of the manager interface of PF4 and PF5 trading servers. v1 answers HTTP errors; v2 answers every call with HTTP 200 and the `{data, error, meta}` envelope.',
    },
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    servers: [{ url: '/' }],
    security: [{ oauth2: ['webapi'] }],
    tags,
    paths,
    components: {
      schemas,
      securitySchemes: {
        oauth2: {
          type: 'oauth2',
          description: 'OAuth 2.0 client credentials with scope `webapi`.',
          flows: { clientCredentials: { tokenUrl: '/connect/token', scopes: { webapi: 'Call the trade platform web interface' } } },
        },
      },
    },
  };
}

function operation(entry: Operation, schemas: Record<string, Schema>): Schema {
  const v2 = entry.generation === 'v2';
  const parameters: Schema[] = [];
  for (const name of pathParamNames(entry.path)) {
    const field = entry.params?.shape[name] as z.ZodType | undefined;
    const schema = name === 'tradePlatform' ? { type: 'string', format: 'uuid' } : field ? inputSchema(field, schemas) : { type: 'string' };
    parameters.push({ name, in: 'path', required: true, schema, ...(name === 'tradePlatform' ? { description: 'Registered trade platform id.' } : {}) });
  }
  const handled = new Set<string>();
  if (entry.query) {
    for (const [name, field] of Object.entries(entry.query.shape as Record<string, z.ZodType>)) {
      handled.add(name);
      const p: Schema = { name, in: 'query', required: !field.safeParse(undefined).success, schema: inputSchema(field, schemas) };
      if (Array.isArray(p.schema && (p.schema as Schema).type) || (p.schema as Schema).type === 'array') Object.assign(p, { style: 'form', explode: true });
      if (name === 'confirm' && entry.destructive) Object.assign(p, { required: v2, description: 'Must be `true`: a deliberateness signal for this destructive operation.' });
      parameters.push(p);
    }
  }
  if (v2 && entry.destructive && !handled.has('confirm')) {
    parameters.push({ name: 'confirm', in: 'query', required: true, schema: { type: 'string', enum: ['true'] }, description: 'Must be `true` for this destructive operation.' });
  }
  if (entry.paged) {
    if (!handled.has('limit')) parameters.push({ name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: PAGE_LIMIT_MAX } });
    if (!handled.has('cursor')) parameters.push({ name: 'cursor', in: 'query', required: false, schema: { type: 'string', maxLength: 512 } });
  }
  if (entry.read !== 'local') {
    const timeout = { type: 'number', minimum: TIMEOUT_MIN_S, maximum: TIMEOUT_MAX_S, default: TIMEOUT_CLASSES[entry.timeout] };
    parameters.push(
      { name: 'X-Request-Timeout', in: 'header', required: false, schema: timeout, description: 'Seconds to wait for the trading server.' },
      { name: 'requestTimeout', in: 'query', required: false, schema: timeout, description: 'Same as X-Request-Timeout, for clients that cannot set headers.' },
    );
  }
  if (v2 && entry.mutating) {
    parameters.push({
      name: 'Idempotency-Key', in: 'header', required: false,
      schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
      description: 'Repeating a call with the same key returns the first answer (header Idempotency-Replayed: true).',
    });
  }

  const op: Schema = {
    operationId: entry.id,
    tags: [entry.tag],
    summary: entry.summary,
    parameters,
    responses: responses(entry, schemas),
  };
  if (entry.body) {
    op.requestBody = { required: !entry.body.safeParse(undefined).success, content: { 'application/json': { schema: inputSchema(entry.body, schemas) } } };
  }
  return op;
}

function responses(entry: Operation, schemas: Record<string, Schema>): Schema {
  const data = dataSchema(entry.response);
  const headers: Schema = entry.read === 'local' ? {} : {
    'X-Request-Timeout-Applied': { schema: { type: 'number' }, description: 'The time budget used, in seconds.' },
    'X-Request-Outcome': { schema: { type: 'string', enum: ['unknown'] }, description: 'Present when a change passed its deadline and may still complete.' },
  };
  if (entry.generation === 'v2') {
    if (entry.mutating) headers['Idempotency-Replayed'] = { schema: { type: 'string', enum: ['true'] } };
    return { 200: { description: 'Envelope: check `error` before reading `data`.', headers, content: json(envelopeSchema(entry, data, schemas)) } };
  }
  const error = (description: string) => ({ description, content: json(entry.family === 'PF5' ? { oneOf: [ref('PF5Error'), ref('HTTPError')] } : ref('HTTPError')) });
  const out: Schema = {
    200: { description: 'Success.', headers, content: json(data) },
    400: error('Invalid input, or the trading platform refused the request.'),
    404: error('Unknown trade platform, or the record was not found.'),
  };
  if (entry.read !== 'local') {
    Object.assign(out, { 500: error('Internal error.'), 503: error('The trading platform is unreachable.'), 504: error('The trading platform did not answer in time.') });
  }
  return out;
}

function envelopeSchema(entry: Operation, data: Schema, schemas: Record<string, Schema>): Schema {
  // Reuse the contract's named envelope where it exists and describes the same payload (e.g. PF4UserApiResponse).
  if (typeof entry.response === 'string' && !entry.paged) {
    const name = entry.response.endsWith('[]') ? `${entry.response.slice(0, -2)}ListApiResponse` : `${entry.response}ApiResponse`;
    if (schemas[name]) return ref(name);
  }
  return {
    type: 'object',
    required: ['data', 'error', 'meta'],
    properties: { data: nullable(data), error: nullable(ref('ApiError')), meta: ref('ApiMeta') },
  };
}

function dataSchema(response: Operation['response']): Schema {
  if (typeof response !== 'string') return response;
  return response.endsWith('[]') ? { type: 'array', items: ref(response.slice(0, -2)) } : ref(response);
}

const json = (schema: Schema) => ({ 'application/json': { schema } });

export function pathParamNames(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
}

/** A zod input schema as an OpenAPI schema; definitions it carries are moved into components. */
function inputSchema(schema: z.ZodType, schemas: Record<string, Schema>): Schema {
  const { $schema: _s, $defs, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Schema & { $defs?: Record<string, Schema> };
  if (!$defs) return rest;
  const relocated = JSON.parse(JSON.stringify({ rest, $defs }).replaceAll('"#/$defs/', '"#/components/schemas/')) as { rest: Schema; $defs: Record<string, Schema> };
  for (const [name, def] of Object.entries(relocated.$defs)) schemas[name] ??= def;
  return relocated.rest;
}

/** Routes outside the catalog: token, discovery, health, the document itself. No token needed on any. */
function edgePaths(): Record<string, Record<string, unknown>> {
  const open = { security: [] as unknown[] };
  return {
    '/connect/token': {
      post: {
        ...open, operationId: 'connect.token', tags: ['Authentication'], summary: 'OAuth 2.0 client-credentials token endpoint.',
        requestBody: {
          required: true,
          content: { 'application/x-www-form-urlencoded': { schema: {
            type: 'object', required: ['grant_type'],
            properties: { grant_type: { enum: ['client_credentials'] }, client_id: { type: 'string' }, client_secret: { type: 'string' }, scope: { type: 'string' } },
          } } },
        },
        responses: {
          200: { description: 'Access token.', content: json({ type: 'object', properties: { access_token: { type: 'string' }, token_type: { type: 'string' }, expires_in: { type: 'integer' }, scope: { type: 'string' } } }) },
          400: { description: 'OAuth error.', content: json({ type: 'object', properties: { error: { type: 'string' }, error_description: { type: 'string' } } }) },
          401: { description: 'Invalid client.' },
        },
      },
    },
    '/.well-known/openid-configuration': { get: { ...open, operationId: 'discovery', tags: ['Authentication'], summary: 'Authorization server metadata.', responses: { 200: { description: 'Metadata.', content: json({ type: 'object' }) } } } },
    '/.well-known/jwks.json': { get: { ...open, operationId: 'jwks', tags: ['Authentication'], summary: 'Public keys that verify access tokens.', responses: { 200: { description: 'JWK set.', content: json({ type: 'object' }) } } } },
    '/healthz': { get: { ...open, operationId: 'healthz', tags: ['Health'], summary: 'Edge, broker and platform health.', responses: { 200: { description: 'All up.', content: json(ref('HealthReport')) }, 503: { description: 'Something is down.', content: json(ref('HealthReport')) } } } },
    '/livez': { get: { ...open, operationId: 'livez', tags: ['Health'], summary: 'The edge process answers.', responses: { 200: { description: 'ok', content: { 'text/plain': { schema: { type: 'string' } } } } } } },
    '/openapi.json': { get: { ...open, operationId: 'openapi', tags: ['Health'], summary: 'This document.', responses: { 200: { description: 'OpenAPI 3.1 document.', content: json({ type: 'object' }) } } } },
  };
}
