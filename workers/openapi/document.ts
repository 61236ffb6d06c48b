/**
 * The OpenAPI 3.1 document of the gateway, generated from the operation catalog so that the routes, their inputs and
 * the published description cannot drift apart. Record schemas come from the generated contract components; input
 * schemas are converted from the catalog's zod schemas as the caller sends them (`io: 'input'`), except that:
 * - a field that parses text into a value (a login, a limit, a flag) is published as the value the text stands for,
 *   as its field helper declares it (`publishedSchemas` in shared/catalog/fields.ts): integers with their bounds,
 *   numbers, booleans, date-times; a path or query field without a declaration is derived from the output of its pipe;
 * - a contract record (or enum) inside an input is a `$ref` to its component rather than a copy.
 * v2 answers are the contract's named envelope of the operation (`PF4UserApiResponse`) where the contract has one.
 */
import { z } from 'zod';
import { AUDIT_OUTCOME_NAMES } from '../../shared/catalog/registry.js';
import { WEBHOOK_EVENT_TYPES } from '../../shared/catalog/webhooks.js';
import { AUDIT_EVENT_FIELDS } from '../audit/auditRecord.js';
import {
  catalog,
  publishedSchemas,
  SCOPES,
  TIMEOUT_CLASSES,
  TIMEOUT_MAX_S,
  TIMEOUT_MIN_S,
  PAGE_LIMIT_MAX,
  type Operation,
  type Scope,
} from '../../shared/catalog/index.js';
import * as contract from '../../shared/records/contract.js';
import { openapiComponents } from '../../shared/records/contract.js';
import { contractOperations } from '../../shared/records/contractOperations.js';
import { TIMEOUT_APPLIED_HEADER } from '../api/timeout.js';
import { takesLocalKey } from '../api/idempotency.js';
import { CON_COMMON_SCHEMAS } from '../../shared/catalog/v1/pf4.js';

type Schema = Record<string, unknown>;
/** The token scope every /api/ operation needs (workers/auth/authConfig.ts SCOPE; that module is worker-typed). */
const SCOPE = 'webapi';
/** What each scope allows, as the token endpoint grants them. */
const SCOPE_TEXT: Record<Scope, string> = {
  webapi: 'Read: every operation that does not change server state, password checks excepted (every token carries it)',
  'webapi.write': 'Change server state: creates, updates, trades; and check account passwords',
  'webapi.admin': 'Destructive and administrative operations (confirm=true on v2), plugin commands',
  'webapi.audit': "Read the organization's audit trail (every call that is not a read)",
  'webapi.webhooks': "Manage the organization's webhook endpoints: register, change, rotate secrets, redeliver",
};
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const nullable = (s: Schema) => ({ anyOf: [s, { type: 'null' }] });

/** Records the edge itself defines: registry records, v1 error bodies, and the envelope parts if the contract lacks them. */
const EDGE_SCHEMAS: Record<string, Schema> = {
  TradePlatformType: { type: 'string', enum: ['PF4', 'PF5', 'PFOther'] },
  Organization: {
    type: 'object',
    required: ['id', 'created'],
    properties: {
      id: { type: 'string', format: 'uuid' },
      name: { type: ['string', 'null'] },
      created: { type: 'string', format: 'date-time' },
    },
  },
  TradePlatform: {
    type: 'object',
    required: ['id', 'type', 'organizationId', 'created'],
    properties: {
      id: { type: 'string', format: 'uuid' },
      name: { type: ['string', 'null'] },
      type: ref('TradePlatformType'),
      organizationId: { type: 'string', format: 'uuid' },
      organization: ref('Organization'),
      created: { type: 'string', format: 'date-time' },
    },
  },
  ApiClient: {
    type: 'object',
    description: "An API client of the caller's organization, without secret material.",
    required: ['clientId', 'organizationId', 'name', 'disabled', 'grantTypes', 'scopes', 'allowedNetworks', 'created'],
    properties: {
      clientId: { type: 'string' },
      organizationId: { type: 'string', format: 'uuid' },
      name: { type: ['string', 'null'] },
      disabled: { type: 'boolean' },
      grantTypes: { type: 'array', items: { type: 'string' } },
      scopes: { type: 'array', items: { type: 'string', enum: [...SCOPES] } },
      allowedNetworks: {
        type: 'array',
        items: { type: 'string' },
        description:
          'Networks (canonical CIDR) its token requests, calls and streams must come from; empty: any source.',
      },
      created: { type: 'string', format: 'date-time' },
    },
  },
  AuditEvent: {
    type: 'object',
    description: 'One call that is not a read, as the audit trail recorded it (docs/audit.md).',
    required: [...AUDIT_EVENT_FIELDS],
    properties: {
      id: { type: 'integer', description: "Its place in the organization's trail" },
      at: { type: 'string', format: 'date-time' },
      organizationId: { type: 'string', format: 'uuid' },
      clientId: { type: 'string' },
      address: { type: ['string', 'null'], description: "The source address Cloudflare's front named" },
      operation: { type: 'string', description: 'Catalog operation id' },
      platform: { type: ['string', 'null'], format: 'uuid' },
      traceId: { type: 'string' },
      idempotencyKey: { type: ['string', 'null'] },
      outcome: { type: 'string', enum: [...AUDIT_OUTCOME_NAMES] },
      code: { type: ['string', 'null'], description: 'The error code of a refusal or an unknown outcome' },
      completedAt: { type: ['string', 'null'], format: 'date-time' },
      args: { type: 'string', description: 'The arguments as JSON text, secrets redacted' },
      replayed: {
        type: 'boolean',
        description:
          "The answer was an earlier call's, replayed under the same Idempotency-Key: nothing was sent again",
      },
    },
  },
  AuditEventPage: {
    type: 'object',
    required: ['events', 'nextCursor'],
    properties: {
      events: { type: 'array', items: ref('AuditEvent') },
      nextCursor: { type: ['string', 'null'], description: 'The cursor of the next page; null on the last' },
    },
  },
  WebhookEndpoint: {
    type: 'object',
    description: "A webhook endpoint of the caller's organization (docs/webhooks.md), never with its secret.",
    required: [
      'id',
      'organizationId',
      'url',
      'description',
      'eventTypes',
      'platforms',
      'enabled',
      'disabledReason',
      'previousSecretValidUntil',
      'created',
      'updated',
    ],
    properties: {
      id: { type: 'string', format: 'uuid' },
      organizationId: { type: 'string', format: 'uuid' },
      url: { type: 'string' },
      description: { type: ['string', 'null'] },
      eventTypes: { type: 'array', items: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] } },
      platforms: {
        type: ['array', 'null'],
        items: { type: 'string', format: 'uuid' },
        description: 'The platforms it hears; null: every platform of the organization',
      },
      enabled: { type: 'boolean' },
      disabledReason: { type: ['string', 'null'], description: 'Why it was disabled: by a caller, 410 Gone, failing' },
      previousSecretValidUntil: {
        type: ['string', 'null'],
        format: 'date-time',
        description: 'Until when the secret before the last rotation still signs deliveries beside the new one',
      },
      created: { type: 'string', format: 'date-time' },
      updated: { type: 'string', format: 'date-time' },
    },
  },
  WebhookEndpointWithSecret: {
    allOf: [
      ref('WebhookEndpoint'),
      {
        type: 'object',
        required: ['secret'],
        properties: {
          secret: {
            type: 'string',
            description: 'whsec_… signing secret (Standard Webhooks): shown in this answer only, keep it',
          },
        },
      },
    ],
  },
  WebhookQueued: {
    type: 'object',
    required: ['queued', 'eventIds'],
    properties: {
      queued: { type: 'integer', description: 'Deliveries queued' },
      eventIds: { type: 'array', items: { type: 'string' }, description: 'Their webhook-id values' },
    },
  },
  WebhookAttempt: {
    type: 'object',
    description: 'One delivery attempt of an event to the endpoint.',
    required: ['at', 'eventId', 'eventType', 'attempt', 'status', 'latencyMs', 'error', 'outcome'],
    properties: {
      at: { type: 'string', format: 'date-time' },
      eventId: { type: 'string' },
      eventType: { type: 'string' },
      attempt: { type: 'integer', description: "The event's attempt number at this endpoint, from 1" },
      status: { type: ['integer', 'null'], description: "The receiver's HTTP status; null when none came" },
      latencyMs: { type: 'integer' },
      error: { type: ['string', 'null'] },
      outcome: { type: 'string', enum: ['delivered', 'retrying', 'deadLettered', 'endpointDisabled'] },
    },
  },
  WebhookDeadLetter: {
    type: 'object',
    description: 'An event the endpoint was not delivered within the retry window, kept for a redelivery.',
    required: ['at', 'eventId', 'eventType', 'attempts', 'lastError'],
    properties: {
      at: { type: 'string', format: 'date-time' },
      eventId: { type: 'string' },
      eventType: { type: 'string' },
      attempts: { type: 'integer' },
      lastError: { type: ['string', 'null'] },
    },
  },
  PingResult: {
    type: 'object',
    description: "Round trip of a Ping through the platform's manager session.",
    properties: {
      ok: { type: 'boolean' },
      roundTripMs: {
        type: 'number',
        format: 'double',
        description: 'milliseconds from the broker to the trading server and back',
      },
      serverTime: { type: ['string', 'null'], format: 'date-time' },
    },
  },
  HTTPError: {
    type: 'object',
    description: 'General v1 error body. With errorType PF4API the code and description are the PF4 manager result.',
    properties: {
      errorType: { type: 'string' },
      errorCode: { type: ['string', 'integer'] },
      errorDescription: { type: ['string', 'null'] },
    },
  },
  PF5Error: {
    type: 'object',
    description: 'v1 PF5 platform failure.',
    properties: {
      errorDescription: { type: ['string', 'null'] },
      errorCode: { type: ['string', 'integer'] },
      errorType: { type: 'string', enum: ['PF5API'] },
      requestId: { type: 'string', format: 'uuid' },
    },
  },
  ApiError: {
    type: 'object',
    required: ['code', 'managerCode', 'message'],
    properties: {
      code: ref('WebApiErrorCode'),
      managerCode: { type: ['string', 'integer', 'null'] },
      message: { type: ['string', 'null'] },
    },
  },
  PagingMeta: {
    type: 'object',
    required: ['nextCursor', 'hasMore'],
    properties: { nextCursor: { type: ['string', 'null'] }, hasMore: { type: 'boolean' } },
  },
  ApiMeta: {
    type: 'object',
    properties: { activityId: { type: ['string', 'null'] }, paging: ref('PagingMeta') },
  },
  OAuthError: {
    type: 'object',
    required: ['error', 'error_description'],
    description: 'RFC 6750 bearer token error.',
    properties: {
      error: {
        type: 'string',
        enum: ['invalid_request', 'invalid_token', 'insufficient_scope', 'server_error', 'temporarily_unavailable'],
      },
      error_description: { type: 'string' },
    },
  },
  // v1 PF4 records of the server's common configuration (ManagerCommonEx, ManagerCommon).
  ...CON_COMMON_SCHEMAS,
  HealthReport: {
    type: 'object',
    properties: {
      status: { enum: ['ok', 'degraded', 'down'] },
      edge: { enum: ['up'] },
      broker: { enum: ['up', 'degraded', 'down'] },
      platforms: {
        oneOf: [
          { type: 'object', additionalProperties: { enum: ['up', 'degraded', 'down', 'unknown'] } },
          { enum: ['up', 'degraded', 'down'] },
        ],
      },
    },
  },
};

/** Contract components win, except where the edge's own shapes are what it actually answers. */
const EDGE_OVERRIDES = new Set(['ApiError', 'PagingMeta', 'ApiMeta']);

export function buildOpenApiDocument(): Schema {
  const schemas: Record<string, Schema> = { ...(openapiComponents as Record<string, Schema>) };
  for (const [name, s] of Object.entries(EDGE_SCHEMAS))
    if (!schemas[name] || EDGE_OVERRIDES.has(name)) schemas[name] = s;

  const paths: Record<string, Record<string, unknown>> = { ...edgePaths() };
  for (const entry of catalog) {
    (paths[entry.path] ??= {})[entry.method.toLowerCase()] = operation(entry, schemas);
  }
  const tags = [...new Set([...catalog.map((e) => e.tag), 'Authentication', 'Health'])]
    .sort()
    .map((name) => ({ name }));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Trade Platform Web Interface',
      version: '2.0.0-beta',
      description:
        'HTTP/JSON gateway in front of the manager interface of PF4 and PF5 trading servers. v1 answers HTTP errors; v2 answers every call with HTTP 200 and the `{data, error, meta}` envelope.',
    },
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    servers: [{ url: '/' }],
    security: [{ oauth2: [SCOPE] }],
    tags,
    paths,
    components: {
      schemas,
      responses: AUTH_RESPONSES,
      headers: HEADERS,
      securitySchemes: {
        oauth2: {
          type: 'oauth2',
          description: `OAuth 2.0 client credentials. Every token carries \`${SCOPE}\`; each operation names the scope it needs in its \`security\`, and a client is granted only the scopes it is registered for.`,
          flows: {
            clientCredentials: {
              tokenUrl: '/connect/token',
              scopes: Object.fromEntries(SCOPES.map((s) => [s, SCOPE_TEXT[s]])),
            },
          },
        },
      },
    },
  };
}

/**
 * Whether an entry answers in the v2 envelope and takes v2's rules (`confirm=true`): the v2 API's operations and the
 * edge's own resources under /api/v2/ (the webhooks). Their changes take an Idempotency-Key, as the v2 API's do.
 */
const enveloped = (entry: Operation) => entry.generation === 'v2' || entry.path.startsWith('/api/v2/');

function operation(entry: Operation, schemas: Record<string, Schema>): Schema {
  const v2 = enveloped(entry);
  const parameters: Schema[] = [];
  for (const name of pathParamNames(entry.path)) {
    const field = entry.params?.shape[name] as z.ZodType | undefined;
    const schema =
      name === 'tradePlatform'
        ? { type: 'string', format: 'uuid' }
        : field
          ? inputSchema(field, schemas, 'parameter')
          : { type: 'string' };
    parameters.push({
      name,
      in: 'path',
      required: true,
      schema,
      ...(name === 'tradePlatform' ? { description: 'Registered trade platform id.' } : {}),
    });
  }
  const handled = new Set<string>();
  if (entry.query) {
    for (const [name, field] of Object.entries<z.ZodType>(entry.query.shape)) {
      handled.add(name);
      const p: Schema = {
        name,
        in: 'query',
        required: !field.safeParse(undefined).success,
        schema: inputSchema(field, schemas, 'parameter'),
      };
      const type = (p.schema as Schema).type;
      if (type === 'array' || (Array.isArray(type) && type.includes('array')))
        Object.assign(p, { style: 'form', explode: true });
      if (name === 'confirm' && entry.destructive && v2)
        Object.assign(p, { required: true, schema: CONFIRM_TRUE, description: CONFIRM_TEXT });
      parameters.push(p);
    }
  }
  if (v2 && entry.destructive && !handled.has('confirm')) {
    parameters.push({ name: 'confirm', in: 'query', required: true, schema: CONFIRM_TRUE, description: CONFIRM_TEXT });
  }
  if (entry.paged) {
    if (!handled.has('limit'))
      parameters.push({
        name: 'limit',
        in: 'query',
        required: false,
        schema: { type: 'integer', minimum: 1, maximum: PAGE_LIMIT_MAX },
      });
    if (!handled.has('cursor'))
      parameters.push({ name: 'cursor', in: 'query', required: false, schema: { type: 'string', maxLength: 512 } });
  }
  {
    // Every endpoint takes the time budget (spec, "Rules for every endpoint"); registry reads answer within any.
    const timeout = {
      type: 'number',
      minimum: TIMEOUT_MIN_S,
      maximum: TIMEOUT_MAX_S,
      default: TIMEOUT_CLASSES[entry.timeout],
    };
    parameters.push(
      {
        name: 'X-Request-Timeout',
        in: 'header',
        required: false,
        schema: timeout,
        description: 'Seconds to wait for the trading server.',
      },
      {
        name: 'requestTimeout',
        in: 'query',
        required: false,
        schema: timeout,
        description: 'Same as X-Request-Timeout, for clients that cannot set headers.',
      },
    );
  }
  if ((entry.generation === 'v2' && entry.mutating) || takesLocalKey(entry)) {
    parameters.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
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
  // The scope this operation needs; a token without it is answered 403 (v1) or a Forbidden envelope (v2).
  if (isProtectedPath(entry.path)) op.security = [{ oauth2: [entry.scope] }];
  if (entry.body) {
    op.requestBody = {
      required: !entry.body.safeParse(undefined).success,
      content: { 'application/json': { schema: inputSchema(entry.body, schemas, 'body') } },
    };
    // A body bound above the edge's default is the operation's own: published so a client can size its batches.
    if (entry.bodyLimitBytes !== undefined) {
      (op.requestBody as Schema).description =
        `At most ${entry.bodyLimitBytes} bytes; a larger body is refused unread, naming \`body\`.`;
      (op.requestBody as Schema)['x-body-limit-bytes'] = entry.bodyLimitBytes;
    }
  }
  return op;
}

const CONFIRM_TRUE = { type: 'boolean', enum: [true] };
const CONFIRM_TEXT = 'Must be `true`: a deliberateness signal for this destructive operation.';

const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** Response headers the document names once and refers to. */
const HEADERS: Record<string, Schema> = {
  [TIMEOUT_APPLIED_HEADER]: {
    description:
      "The time budget that applied, in seconds: the valid `X-Request-Timeout` (or `requestTimeout`) sent, else the operation's class default. On every answer under /api/, refusals included.",
    schema: { type: 'number', minimum: TIMEOUT_MIN_S, maximum: TIMEOUT_MAX_S },
  },
  'X-Request-Outcome': {
    description: 'Present when a change passed its deadline and may still complete: check before repeating.',
    schema: { type: 'string', enum: ['unknown'] },
  },
  'Idempotency-Replayed': {
    description: 'The first answer to this Idempotency-Key, replayed.',
    schema: { type: 'string', enum: ['true'] },
  },
  'WWW-Authenticate': {
    description: `RFC 6750 Bearer challenge (\`Bearer realm="…"\`), with \`error\` and \`error_description\` when a token was sent (and \`scope="${SCOPE}"\` for insufficient_scope).`,
    required: true,
    schema: { type: 'string', pattern: '^Bearer ' },
  },
};

/** The token guard's refusals, the same on every operation under /api/ (outside the v2 envelope). */
const AUTH_RESPONSES: Record<string, Schema> = {
  Unauthorized: {
    description:
      'No access token, or one that is expired, malformed, wrongly signed, for another audience, or without the organization claim (RFC 6750 `invalid_token`). An Authorization header that is not a Bearer credential at all is answered 400 `invalid_request` with the same challenge.',
    headers: {
      'WWW-Authenticate': headerRef('WWW-Authenticate'),
      [TIMEOUT_APPLIED_HEADER]: headerRef(TIMEOUT_APPLIED_HEADER),
    },
    content: { 'application/json': { schema: ref('OAuthError') } },
  },
  Forbidden: {
    description: `The access token lacks the \`${SCOPE}\` scope, or (v1) the scope the operation needs (RFC 6750 \`insufficient_scope\`); v2 answers a missing operation scope with a \`Forbidden\` envelope instead.`,
    headers: {
      'WWW-Authenticate': headerRef('WWW-Authenticate'),
      [TIMEOUT_APPLIED_HEADER]: headerRef(TIMEOUT_APPLIED_HEADER),
    },
    content: { 'application/json': { schema: ref('OAuthError') } },
  },
};

/** Whether the token guard stands in front of a path (everything under /api/). */
export const isProtectedPath = (path: string) => path.startsWith('/api/');

function responses(entry: Operation, schemas: Record<string, Schema>): Schema {
  const data = dataSchema(entry.response);
  const headers: Schema = { [TIMEOUT_APPLIED_HEADER]: headerRef(TIMEOUT_APPLIED_HEADER) };
  if (entry.mutating) headers['X-Request-Outcome'] = headerRef('X-Request-Outcome');
  const auth = isProtectedPath(entry.path)
    ? { 401: { $ref: '#/components/responses/Unauthorized' }, 403: { $ref: '#/components/responses/Forbidden' } }
    : {};
  if (enveloped(entry)) {
    const ok = {
      ...headers,
      ...((entry.generation === 'v2' && entry.mutating) || takesLocalKey(entry)
        ? { 'Idempotency-Replayed': headerRef('Idempotency-Replayed') }
        : {}),
    };
    return {
      200: {
        description: 'Envelope: check `error` before reading `data`.',
        headers: ok,
        content: json(envelopeSchema(entry, data, schemas)),
      },
      ...auth,
    };
  }
  const error = (description: string) => ({
    description,
    headers,
    content: json(entry.family === 'PF5' ? { oneOf: [ref('PF5Error'), ref('HTTPError')] } : ref('HTTPError')),
  });
  const out: Schema = {
    200: { description: 'Success.', headers, content: json(data) },
    400: error('Invalid input, or the trading platform refused the request.'),
    ...auth,
    404: error('Unknown trade platform, or the record was not found.'),
  };
  if (entry.read !== 'local') {
    Object.assign(out, {
      500: error('Internal error.'),
      503: error('The trading platform is unreachable.'),
      504: error('The trading platform did not answer in time.'),
    });
  }
  return out;
}

const shapeOf = (path: string) => path.replace(/\{\w+\}/g, '{}');
/** The contract's envelope name of each v2 operation, by method and path shape. */
const CONTRACT_ENVELOPES = new Map(contractOperations.map((o) => [`${o.method} ${shapeOf(o.path)}`, o.response]));

/** A schema with its nullability dropped (`anyOf [X, null]` → X, `type: [T, null]` → T), to compare payloads. */
function nonNull(s: Schema | undefined): Schema | undefined {
  if (!s) return s;
  if (Array.isArray(s.anyOf)) {
    const rest = (s.anyOf as Schema[]).filter((b) => b.type !== 'null');
    return rest.length === 1 ? nonNull(rest[0]) : { ...s, anyOf: rest };
  }
  if (Array.isArray(s.type)) {
    const rest = (s.type as string[]).filter((t) => t !== 'null');
    return { ...s, type: rest.length === 1 ? rest[0] : rest };
  }
  return s;
}

const canonical = (v: unknown): string =>
  JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => a.localeCompare(b)))
      : x,
  );

/** Whether a contract envelope's `data` is the payload the edge answers (nullability aside; inline types by type). */
export function envelopeCarries(envelope: Schema | undefined, data: Schema): boolean {
  const carried = nonNull((envelope?.properties as Record<string, Schema> | undefined)?.data);
  if (!carried) return false;
  if (data.$ref || data.type === 'array') return canonical(carried) === canonical(nonNull(data));
  const ours = nonNull(data)!;
  if (ours.type === undefined)
    return carried.type === undefined && Object.keys(carried).length === 0 && Object.keys(ours).length === 0;
  return (
    canonical(carried.type) === canonical(ours.type) && (ours.format === undefined || carried.format === ours.format)
  );
}

/** The contract's named envelope of a v2 operation, when the contract names one and it carries the entry's payload. */
export function contractEnvelope(entry: Operation, schemas: Record<string, Schema>): string | undefined {
  const data = dataSchema(entry.response);
  const named = CONTRACT_ENVELOPES.get(`${entry.method} ${shapeOf(entry.path)}`);
  if (named && envelopeCarries(schemas[named], data)) return named;
  if (typeof entry.response === 'string') {
    const name = entry.response.endsWith('[]')
      ? `${entry.response.slice(0, -2)}ListApiResponse`
      : `${entry.response}ApiResponse`;
    if (envelopeCarries(schemas[name], data)) return name;
  }
  return undefined;
}

function envelopeSchema(entry: Operation, data: Schema, schemas: Record<string, Schema>): Schema {
  const named = contractEnvelope(entry, schemas);
  if (named) return ref(named);
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

/** Contract records and enums by their zod schema: an input that embeds one refers to its component. */
const CONTRACT_SCHEMAS = new Map<unknown, string>();
for (const [name, value] of Object.entries(contract)) {
  if (
    name in openapiComponents &&
    value &&
    typeof value === 'object' &&
    '_zod' in value &&
    !CONTRACT_SCHEMAS.has(value)
  )
    CONTRACT_SCHEMAS.set(value, name);
}

type Where = 'parameter' | 'body';

type ZodInternals = {
  _zod: { def: { type: string; in?: z.ZodType; out?: z.ZodType; defaultValue?: unknown }; parent?: z.ZodType };
};
const internals = (schema: z.ZodType) => (schema as unknown as ZodInternals)._zod;

/** The contract record a schema is, itself or with checks added (`.superRefine()` keeps the record as its parent). */
function contractRecordOf(schema: z.ZodType | undefined): string | undefined {
  for (let s = schema, depth = 0; s && depth < 16; s = internals(s).parent, depth++) {
    const name = CONTRACT_SCHEMAS.get(s);
    if (name) return name;
  }
  return undefined;
}

/**
 * What a path or query field that parses text stands for, when its own schema declares nothing: a string piped into
 * a published field is that field (`z.string({error}).pipe(intText('shift'))`); otherwise the output of the pipe when
 * it is a number or a boolean (`z.string().regex(..).transform(Number).pipe(z.number().int()...)` → integer, bounds).
 */
function derived(schema: z.ZodType, json: Schema): Schema | undefined {
  const def = internals(schema).def;
  if (def.type !== 'pipe' || !def.out || json.type !== 'string') return undefined;
  const declared = publishedSchemas.get(def.out);
  if (declared) return declared;
  const { $schema: _s, ...out } = z.toJSONSchema(def.out, { io: 'output', unrepresentable: 'any' }) as Schema;
  return out.type === 'integer' || out.type === 'number' || out.type === 'boolean' ? out : undefined;
}

/** Replaces the converted text schema of a field with what it is published as (see the header comment). */
function publishedOverride(where: Where) {
  return ({ zodSchema, jsonSchema }: { zodSchema: unknown; jsonSchema: Schema }) => {
    const schema = zodSchema as z.ZodType;
    const def = internals(schema).def;
    // A default of a converting field is dropped from the input side by zod; it is the value the field stands for.
    if (where === 'parameter' && def.type === 'default' && jsonSchema.default === undefined) {
      const value = def.defaultValue;
      if (['string', 'number', 'boolean'].includes(typeof value)) jsonSchema.default = value;
    }
    const record = contractRecordOf(schema);
    const replacement = record
      ? ref(record)
      : (publishedSchemas.get(schema) ?? (where === 'parameter' ? derived(schema, jsonSchema) : undefined));
    if (!replacement) return;
    const { description } = jsonSchema;
    for (const key of Object.keys(jsonSchema)) delete jsonSchema[key];
    Object.assign(
      jsonSchema,
      JSON.parse(JSON.stringify(replacement)),
      description === undefined || record ? {} : { description },
    );
  };
}

/** A zod input schema as an OpenAPI schema; definitions it carries are moved into components. */
function inputSchema(schema: z.ZodType, schemas: Record<string, Schema>, where: Where): Schema {
  const {
    $schema: _s,
    $defs,
    ...rest
  } = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    override: publishedOverride(where),
  }) as Schema & { $defs?: Record<string, Schema> };
  if (!$defs) return rest;
  const relocated = JSON.parse(JSON.stringify({ rest, $defs }).replaceAll('"#/$defs/', '"#/components/schemas/')) as {
    rest: Schema;
    $defs: Record<string, Schema>;
  };
  for (const [name, def] of Object.entries(relocated.$defs)) schemas[name] ??= def;
  return relocated.rest;
}

/** Routes outside the catalog: token, discovery, health, the document itself. No token needed on any. */
function edgePaths(): Record<string, Record<string, unknown>> {
  const open = { security: [] as unknown[] };
  return {
    '/connect/token': {
      post: {
        ...open,
        operationId: 'connect.token',
        tags: ['Authentication'],
        summary: 'OAuth 2.0 client-credentials token endpoint.',
        requestBody: {
          required: true,
          content: {
            'application/x-www-form-urlencoded': {
              schema: {
                type: 'object',
                required: ['grant_type'],
                properties: {
                  grant_type: { enum: ['client_credentials'] },
                  client_id: { type: 'string' },
                  client_secret: { type: 'string' },
                  scope: { type: 'string' },
                },
              },
            },
          },
        },
        responses: {
          200: {
            description: 'Access token.',
            content: json({
              type: 'object',
              properties: {
                access_token: { type: 'string' },
                token_type: { type: 'string' },
                expires_in: { type: 'integer' },
                scope: { type: 'string' },
              },
            }),
          },
          400: {
            description: 'OAuth error.',
            content: json({
              type: 'object',
              properties: { error: { type: 'string' }, error_description: { type: 'string' } },
            }),
          },
          401: { description: 'Invalid client.' },
        },
      },
    },
    '/.well-known/openid-configuration': {
      get: {
        ...open,
        operationId: 'discovery',
        tags: ['Authentication'],
        summary: 'Authorization server metadata.',
        responses: { 200: { description: 'Metadata.', content: json({ type: 'object' }) } },
      },
    },
    '/.well-known/jwks.json': {
      get: {
        ...open,
        operationId: 'jwks',
        tags: ['Authentication'],
        summary: 'Public keys that verify access tokens.',
        responses: { 200: { description: 'JWK set.', content: json({ type: 'object' }) } },
      },
    },
    '/healthz': {
      get: {
        ...open,
        operationId: 'healthz',
        tags: ['Health'],
        summary: 'Edge, broker and platform health.',
        responses: {
          200: {
            description: 'Every platform up (ok), or served by some of its brokers only (degraded).',
            content: json(ref('HealthReport')),
          },
          503: { description: 'A platform, or the default brokers, down.', content: json(ref('HealthReport')) },
        },
      },
    },
    '/livez': {
      get: {
        ...open,
        operationId: 'livez',
        tags: ['Health'],
        summary: 'The edge process answers.',
        responses: { 200: { description: 'ok', content: { 'text/plain': { schema: { type: 'string' } } } } },
      },
    },
    '/openapi.json': {
      get: {
        ...open,
        operationId: 'openapi',
        tags: ['Health'],
        summary: 'This document.',
        responses: { 200: { description: 'OpenAPI 3.1 document.', content: json({ type: 'object' }) } },
      },
    },
  };
}
