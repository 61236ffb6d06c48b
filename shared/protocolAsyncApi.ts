/**
 * The manager protocol's AsyncAPI 3.0 document (docs/manager-protocol.asyncapi.json), made from the protocol's zod
 * schemas (`shared/protocol.ts`) so that bridge authors can generate their frame and record types. Pure: it answers
 * the document and its text; `npm run gen:asyncapi` (scripts/gen-asyncapi.ts) writes or checks the file and a unit
 * test holds the committed file to it.
 *
 * Invariants: every payload is `z.toJSONSchema` of a protocol schema (JSON Schema draft-07, the AsyncAPI schema
 * format's base; input form, so members a receiver ignores are allowed). A protocol record (`PROTOCOL_RECORDS`) is a
 * component of its name and referenced wherever it appears; a contract record (`CONTRACT_RECORDS`) is the contract's
 * OpenAPI component (`openapiComponents`), copied with the components it references, members beyond the contract's
 * allowed (the broker drops them), every int64 described as travelling in bare digits and a flag set as the joined
 * text it travels as. The same input makes the same text byte for byte. `protocolDocSections` writes the tables of
 * docs/manager-protocol.md that come from the same schemas (the frames, the login's records, the change events).
 */
import { z } from 'zod';
import {
  CHANGE_EVENTS,
  CLOSE_CODE_MEANINGS,
  CLOSE_CODES,
  CONTRACT_RECORDS,
  changeEventSchema,
  changeKindsOf,
  FAMILIES,
  INT64_TEXT,
  JSON_FORMS,
  loginArgsSchema,
  loginResultSchema,
  managerErrorAnswerSchema,
  managerErrorBodySchema,
  managerEventSchema,
  managerRequestSchema,
  managerResultAnswerSchema,
  PROTOCOL_RECORDS,
  PROTOCOL_VERSIONS,
  pingResultSchema,
  resyncBeginSchema,
  resyncChunkOf,
  resyncChunkSchema,
  resyncEndSchema,
  type ChangeKind,
  type Family,
} from './protocol.js';
import { openapiComponents } from './records/contract.js';
import { isFlags } from './records/generateRecords.js';
import { valueText } from './valueText.js';

type Json = Record<string, unknown>;

/** The document's file, relative to the repository. */
export const ASYNCAPI_FILE = 'docs/manager-protocol.asyncapi.json';

const SCHEMAS = '#/components/schemas/';
const CHANNEL = 'managerSession';

/** A message of the document: its key, what it is, and its payload's schema. */
interface MessageSpec {
  key: string;
  title: string;
  summary: string;
  payload: z.ZodType;
  /** Requests and answers: matched by `id`. */
  correlated?: boolean;
}

// ---- schemas -----------------------------------------------------------------------------------------------------

/** Converts protocol schemas, collecting the components they reference. */
class SchemaWriter {
  readonly protocolNames = new Set<string>();
  readonly contractNames = new Set<string>();
  private readonly byName = new Map<string, z.ZodType>();

  constructor() {
    for (const [schema, name] of PROTOCOL_RECORDS) this.byName.set(name, schema);
  }

  /** `schema` as JSON Schema, with every named record other than `schema` itself referenced. */
  json(schema: z.ZodType, asComponent = false): Json {
    const out = z.toJSONSchema(schema, {
      target: 'draft-7',
      io: 'input',
      unrepresentable: 'any',
      override: (ctx) => {
        const zod = ctx.zodSchema as unknown as z.ZodType;
        const target = ctx.jsonSchema as Json;
        const replace = (next: Json) => {
          for (const key of Object.keys(target)) delete target[key];
          Object.assign(target, next);
        };
        const own = PROTOCOL_RECORDS.get(zod);
        if (own !== undefined && !(asComponent && zod === schema)) {
          this.protocolNames.add(own);
          replace({ $ref: SCHEMAS + own });
          return;
        }
        const contract = inherited(CONTRACT_RECORDS, zod);
        if (contract !== undefined) {
          if (!(contract in openapiComponents))
            throw new Error(`the protocol names the contract record ${contract}, which the contract has not`);
          this.contractNames.add(contract);
          const description = target.description;
          replace(
            description === undefined
              ? { $ref: SCHEMAS + contract }
              : { description, allOf: [{ $ref: SCHEMAS + contract }] },
          );
          return;
        }
        const form = inherited(JSON_FORMS, zod);
        if (form !== undefined) {
          const description = target.description;
          replace({ ...(description === undefined ? {} : { description }), ...(structuredClone(form) as Json) });
          return;
        }
        if ((zod as unknown as { _zod: { def: { type: string } } })._zod.def.type === 'custom') {
          throw new Error(
            `a protocol schema at ${ctx.path.join('.') || 'the root'} has no JSON Schema form (JSON_FORMS)`,
          );
        }
      },
    }) as Json;
    delete out.$schema;
    if ('definitions' in out || '$defs' in out)
      throw new Error('a protocol schema came out with definitions of its own: name it instead');
    return out;
  }

  /** components/schemas: the protocol records referenced, then the contract records with what they reference. */
  components(): Record<string, Json> {
    const out: Record<string, Json> = {};
    // Converting a record may reference further records: go on until none is new.
    const done = new Set<string>();
    for (
      let pending = [...this.protocolNames];
      pending.length;
      pending = [...this.protocolNames].filter((n) => !done.has(n))
    ) {
      for (const name of pending) {
        done.add(name);
        out[name] = this.json(this.byName.get(name)!, true);
      }
    }
    const contract = openapiComponents as Record<string, Json>;
    const queue = [...this.contractNames];
    const seen = new Set(queue);
    while (queue.length) {
      const name = queue.shift()!;
      if (name in out) throw new Error(`${name} is both a protocol record and a contract record`);
      out[name] = contractForm(name, contract[name], (ref) => {
        if (!seen.has(ref)) {
          seen.add(ref);
          queue.push(ref);
        }
      });
    }
    return Object.fromEntries(
      Object.keys(out)
        .sort(ordinal)
        .map((name) => [name, out[name]]),
    );
  }
}

/** What `map` holds for `schema` or the schema it was copied from (`describe()` answers a copy whose parent it is). */
function inherited<T>(map: ReadonlyMap<z.ZodType, T>, schema: z.ZodType): T | undefined {
  for (
    let at: z.ZodType | undefined = schema;
    at;
    at = (at as unknown as { _zod: { parent?: z.ZodType } })._zod.parent
  ) {
    const value = map.get(at);
    if (value !== undefined) return value;
  }
  return undefined;
}

/**
 * A contract component as the protocol carries it: an object allows members beyond the contract's (a server's own
 * fields, which the broker drops), an int64 says how it travels, and a flag set is the text it travels as (its members
 * joined by ", ", where the contract lists the members as an enum). `onRef` is told each component it references.
 */
function contractForm(name: string, schema: Json, onRef: (name: string) => void): Json {
  if (isFlags(name) && Array.isArray(schema.enum)) {
    return {
      type: 'string',
      'x-flag-members': schema.enum,
      description: `a flag set: the names of the set flags joined by ", " (None for none; Bit<n> for a flag without a name), of ${(schema.enum as string[]).join(', ')}`,
    };
  }
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (typeof node !== 'object' || node === null) return node;
    const out: Json = {};
    for (const [key, value] of Object.entries(node as Json)) {
      if (key === 'additionalProperties' && value === false) continue;
      if (key === '$ref' && typeof value === 'string') onRef(value.slice(value.lastIndexOf('/') + 1));
      out[key] = key === 'enum' || key === 'required' ? value : walk(value);
    }
    if (out.format === 'int64' && out.description === undefined) out.description = INT64_TEXT;
    return out;
  };
  return walk(schema) as Json;
}

const ordinal = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

// ---- messages ----------------------------------------------------------------------------------------------------

const id = managerRequestSchema.shape.id;
const resync = (op: 'begin' | 'chunk' | 'end', record: z.ZodType) =>
  z.object({ event: z.literal('resync'), op: z.literal(op), record });

const REQUESTS: readonly MessageSpec[] = [
  {
    key: 'loginRequest',
    title: 'login',
    correlated: true,
    summary: "The first request on a connection; anything else before it is refused with the family's no-rights code.",
    payload: z.object({ id, cmd: z.literal('login'), args: loginArgsSchema }),
  },
  {
    key: 'pingRequest',
    title: 'Ping',
    correlated: true,
    summary:
      "The broker's keep-alive, every 5 s while none is out; unanswered within 5 s with no frame since, the connection is dead.",
    payload: z.object({ id, cmd: z.literal('Ping') }),
  },
  {
    key: 'commandRequest',
    title: 'command',
    correlated: true,
    summary:
      'Any other command: its name and arguments are the family\'s (docs/manager-protocol.md, "Which commands each operation needs").',
    payload: managerRequestSchema,
  },
];

const ANSWERS: readonly MessageSpec[] = [
  {
    key: 'loginAnswer',
    title: 'login answer',
    correlated: true,
    summary: 'The session is up. With pump the snapshot follows, then the change events.',
    payload: z.object({ id, result: loginResultSchema }),
  },
  {
    key: 'pingAnswer',
    title: 'Ping answer',
    correlated: true,
    summary: "Ping's result.",
    payload: z.object({ id, result: pingResultSchema }),
  },
  {
    key: 'resultAnswer',
    title: 'answer',
    correlated: true,
    summary: "A command's result.",
    payload: managerResultAnswerSchema,
  },
  {
    key: 'errorAnswer',
    title: 'error answer',
    correlated: true,
    summary: "A refused request, with the family's numeric result code.",
    payload: managerErrorAnswerSchema,
  },
];

function snapshotKinds(family: Family): ChangeKind[] {
  return changeKindsOf(family).filter((kind) => CHANGE_EVENTS[family][kind]!.snapshot);
}

const RESYNC: readonly MessageSpec[] = [
  {
    key: 'resyncBegin',
    title: 'resync begin',
    summary: 'A whole new snapshot starts.',
    payload: resync('begin', resyncBeginSchema),
  },
  ...FAMILIES.map((family): MessageSpec => {
    const chunks = snapshotKinds(family).map((kind) => resyncChunkOf(family, kind));
    return {
      key: `resyncChunk${family}`,
      title: `${family} resync chunk`,
      summary: `Records of one kind of a ${family} snapshot (${snapshotKinds(family).join(', ')}), as its add and update events carry them.`,
      payload: resync('chunk', z.discriminatedUnion('kind', chunks as [(typeof chunks)[0], ...typeof chunks])),
    };
  }),
  {
    key: 'resyncEnd',
    title: 'resync end',
    summary: 'The snapshot is complete: every event after it is newer.',
    payload: resync('end', resyncEndSchema),
  },
];

/** The key of the message of one family's change kind and op group: `pf4UsersPut`, `pf5DealsDelete`. */
export function messageKey(family: Family, kind: ChangeKind, group: 'put' | 'delete'): string {
  return `${family.toLowerCase()}${kind[0].toUpperCase()}${kind.slice(1)}${group === 'put' ? 'Put' : 'Delete'}`;
}

function changeMessages(family: Family): MessageSpec[] {
  return changeKindsOf(family).flatMap((kind) => {
    const spec = CHANGE_EVENTS[family][kind]!;
    const put = spec.ops.filter((op) => op !== 'delete');
    const note = spec.note ? ` ${spec.note}` : '';
    const out: MessageSpec[] = [];
    if (put.length) {
      out.push({
        key: messageKey(family, kind, 'put'),
        title: `${family} ${kind} ${put.join(', ')}`,
        payload: changeEventSchema(family, kind, 'put'),
        summary: `A ${family} ${kind} record, whole, after the change (the broker puts it by key).${note}`,
      });
    }
    if (spec.ops.includes('delete')) {
      out.push({
        key: messageKey(family, kind, 'delete'),
        title: `${family} ${kind} delete`,
        payload: changeEventSchema(family, kind, 'delete'),
        summary: `A ${family} ${kind} record is gone: the broker removes it by the key field the record carries.${note}`,
      });
    }
    return out;
  });
}

// ---- the document ------------------------------------------------------------------------------------------------

const DESCRIPTION = [
  "How the broker of the trade-platform gateway talks to a trading server: the simulator, or a bridge next to a real PF4 or PF5 server. Normative text: docs/manager-protocol.md; this document is generated from the protocol's schemas (shared/protocol.ts) by `npm run gen:asyncapi`.",
  '',
  "It describes the trading server's side: the application that receives the broker's requests on a WebSocket and sends their answers, the resync snapshot and the change events. Each request is answered once, `{id, result}` or `{id, error: {code, message}}`, in any order, matched by `id`; events carry no `id`.",
  '',
  'JSON text frames, one message each, UTF-8, no compression. Members a receiver does not know are ignored. Integers are JSON numbers; int64 values (PF5 logins, tickets, deal, order and position ids) travel as bare digits beyond 2^53 − 1, never quoted and never with a fraction or an exponent, and both sides read and write them exactly. Doubles are finite JSON numbers; date-times are ISO 8601 strings in UTC.',
  '',
  "After a login with `pump` the server sends the snapshot (resync begin, chunks, end) and only then change events, each newer than the snapshot, in the order the changes happened. Contract records (components named PF4… and PF5… as in the gateway's OpenAPI document) are shaped by the broker on arrival: members beyond the contract's are dropped, missing ones filled.",
].join('\n');

function closeCodesText(): string {
  return Object.entries(CLOSE_CODES)
    .map(([name, code]) => `- ${code}: ${CLOSE_CODE_MEANINGS[name as keyof typeof CLOSE_CODES]}`)
    .join('\n');
}

function message(spec: MessageSpec, writer: SchemaWriter): Json {
  return {
    name: spec.key,
    title: spec.title,
    summary: spec.summary,
    contentType: 'application/json',
    ...(spec.correlated ? { correlationId: { $ref: '#/components/correlationIds/requestId' } } : {}),
    payload: writer.json(spec.payload),
  };
}

const messageRefs = (specs: readonly MessageSpec[]) =>
  specs.map((s) => ({ $ref: `#/channels/${CHANNEL}/messages/${s.key}` }));

/** The AsyncAPI document as the protocol's schemas make it now. */
export function managerProtocolAsyncApi(): Json {
  const writer = new SchemaWriter();
  const changes = Object.fromEntries(FAMILIES.map((family) => [family, changeMessages(family)])) as Record<
    Family,
    MessageSpec[]
  >;
  const all = [...REQUESTS, ...ANSWERS, ...RESYNC, ...FAMILIES.flatMap((f) => changes[f])];
  const keys = new Set(all.map((s) => s.key));
  if (keys.size !== all.length) throw new Error('two messages of the document share a key');
  const messages = Object.fromEntries(all.map((spec) => [spec.key, message(spec, writer)]));
  const channel = { $ref: `#/channels/${CHANNEL}` };
  const reply = (answer: string) => ({
    channel,
    messages: messageRefs(ANSWERS.filter((s) => s.key === answer || s.key === 'errorAnswer')),
  });
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Manager protocol',
      version: String(PROTOCOL_VERSIONS[PROTOCOL_VERSIONS.length - 1]),
      description: DESCRIPTION,
    },
    defaultContentType: 'application/json',
    servers: {
      tradingServer: {
        host: '{host}',
        protocol: 'ws',
        pathname: '/{server}',
        title: "A trading server's manager endpoint",
        description:
          "The `server` URL of the platform's entry in the broker's platform file, `ws://` or `wss://` (the broker uses the URL's path as it is). One process may serve several trading servers, each at its own path. The broker sends no subprotocol and no credentials in the upgrade; the login request carries them.",
        variables: {
          host: { description: "host and port of the trading server's process", examples: ['127.0.0.1:8791'] },
          server: {
            description: "the trading server's name inside the process (one path segment)",
            examples: ['demo-pf4', 'demo-pf5'],
          },
        },
      },
    },
    channels: {
      [CHANNEL]: {
        address: null,
        title: 'Manager session',
        description: `One manager session per socket, the whole of the connection: the broker's requests, the server's answers and events. A server serves several sessions at once (a pair of brokers holds one each). Close codes a server sends (the broker handles every end of a connection alike: the session is down, requests in flight fail, it reconnects with backoff):\n${closeCodesText()}`,
        servers: [{ $ref: '#/servers/tradingServer' }],
        messages: Object.fromEntries(all.map((spec) => [spec.key, { $ref: `#/components/messages/${spec.key}` }])),
        'x-close-codes': Object.fromEntries(
          Object.entries(CLOSE_CODES).map(([name, code]) => [
            String(code),
            { name, description: CLOSE_CODE_MEANINGS[name as keyof typeof CLOSE_CODES] },
          ]),
        ),
      },
    },
    operations: {
      receiveLogin: {
        action: 'receive',
        channel,
        title: 'Log a manager in',
        summary: 'The broker logs in as soon as the socket opens; the answer has 10 s.',
        messages: messageRefs(REQUESTS.filter((s) => s.key === 'loginRequest')),
        reply: reply('loginAnswer'),
      },
      receivePing: {
        action: 'receive',
        channel,
        title: 'Answer a keep-alive',
        summary:
          'Once the snapshot has ended, the answer comes after the events of every change made before the Ping arrived.',
        messages: messageRefs(REQUESTS.filter((s) => s.key === 'pingRequest')),
        reply: reply('pingAnswer'),
      },
      receiveCommand: {
        action: 'receive',
        channel,
        title: 'Answer a command',
        summary:
          "Exactly one answer per request, late if need be: an unanswered request holds one of the session's places for the rest of the connection.",
        messages: messageRefs(REQUESTS.filter((s) => s.key === 'commandRequest')),
        reply: reply('resultAnswer'),
      },
      sendResync: {
        action: 'send',
        channel,
        title: 'Send the snapshot',
        summary: 'After a login with pump: begin, the chunks, end; then change events.',
        messages: messageRefs(RESYNC),
      },
      ...Object.fromEntries(
        FAMILIES.map((family) => [
          `send${family}Changes`,
          {
            action: 'send',
            channel,
            title: `Push ${family} change events`,
            summary: `Every change of what the broker caches, in the order the changes happened (${changeKindsOf(family).join(', ')}).`,
            messages: messageRefs(changes[family]),
          },
        ]),
      ),
    },
    components: {
      schemas: writer.components(),
      messages,
      correlationIds: {
        requestId: { description: "The request's id, carried back by its answer.", location: '$message.payload#/id' },
      },
    },
  };
}

// ---- the prose's generated tables ----------------------------------------------------------------------------------

const code = (text: string) => `\`${text}\``;
const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

/** A JSON Schema of the document in words, for a table cell. */
function typeText(schema: Json): string {
  if (typeof schema.$ref === 'string') return code(schema.$ref.slice(SCHEMAS.length));
  if (Array.isArray(schema.allOf)) return (schema.allOf as Json[]).map(typeText).join(' with ');
  if (Array.isArray(schema.enum)) return (schema.enum as unknown[]).map((v) => code(String(v))).join(' / ');
  if (schema.const !== undefined) return code(valueText(schema.const));
  /** ` ≥ low`, ` ≤ high` or ` low to high`, leaving out a bound that is only the JSON number's. */
  const bounds = (low: unknown, high: unknown) => {
    const from = typeof low === 'number' && low > Number.MIN_SAFE_INTEGER ? low : undefined;
    const to = typeof high === 'number' && high < Number.MAX_SAFE_INTEGER ? high : undefined;
    if (from !== undefined && to !== undefined) return from === to ? ` ${from}` : ` ${from} to ${to}`;
    return from !== undefined ? ` ≥ ${from}` : to !== undefined ? ` ≤ ${to}` : '';
  };
  switch (schema.type) {
    case 'integer':
      return schema.format === 'int64' ? 'int64' : `integer${bounds(schema.minimum, schema.maximum)}`;
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'string':
      return schema.format === 'date-time' ? 'date-time' : 'string';
    case 'array': {
      const count = bounds(schema.minItems, schema.maxItems);
      return `list${count ? ` (${count.trim()})` : ''} of ${typeText((schema.items ?? {}) as Json)}`;
    }
    case 'object':
      if (schema.properties) return code(`{${Object.keys(schema.properties).join(', ')}}`);
      if (typeof schema.additionalProperties === 'object')
        return `object of ${typeText(schema.additionalProperties as Json)}`;
      return 'object';
    default:
      return 'any JSON value';
  }
}

/** A record's shape in words: a contract record by name, a protocol record by name and fields. */
function recordText(schema: Json, components: Record<string, Json>): string {
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1) return recordText(schema.allOf[0] as Json, components);
  if (typeof schema.$ref !== 'string') return typeText(schema);
  const name = schema.$ref.slice(SCHEMAS.length);
  return [...PROTOCOL_RECORDS.values()].includes(name) ? `${code(name)}: ${typeText(components[name])}` : code(name);
}

/** What a field is: its own description, or the description of the record it references. */
function descriptionOf(schema: Json, components: Record<string, Json>): string {
  if (typeof schema.description === 'string') return schema.description;
  const ref = typeof schema.$ref === 'string' ? components[schema.$ref.slice(SCHEMAS.length)] : undefined;
  return typeof ref?.description === 'string' ? ref.description : '';
}

/** A table of a record's fields: one row per field, with its type, whether it must be there and what it is. */
function fieldRows(name: string, schema: Json, components: Record<string, Json>): string[] {
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(schema.properties as Record<string, Json>).map(
    ([field, s]) =>
      `| ${code(name)} | ${code(field)} | ${cell(typeText(s))} | ${required.has(field) ? 'yes' : 'no'} | ${cell(descriptionOf(s, components))} |`,
  );
}

/**
 * The generated sections of docs/manager-protocol.md that come from the protocol's schemas, by marker name, as the
 * AsyncAPI document states them (scripts/gen-protocol-docs.ts writes them with the others).
 */
export function protocolDocSections(): Map<string, string> {
  const document = managerProtocolAsyncApi() as {
    components: { schemas: Record<string, Json>; messages: Record<string, { payload: Json }> };
  };
  const schemas = document.components.schemas;
  const header = ['| record | field | type | required | what it is |', '|---|---|---|---|---|'];
  const login = [
    ...header,
    ...['LoginArgs', 'LoginResult', 'Capabilities'].flatMap((n) => fieldRows(n, schemas[n], schemas)),
  ];

  const writer = new SchemaWriter();
  const frame = (title: string, from: string, schema: z.ZodType) => {
    const body = writer.json(schema, true);
    const required = new Set((body.required ?? []) as string[]);
    const members = Object.entries(body.properties as Record<string, Json>)
      .map(([field, s]) => `${code(field)}${required.has(field) ? '' : ' (optional)'}: ${typeText(s)}`)
      .join('; ');
    return `| ${title} | ${from} | ${cell(members)} |`;
  };
  const frames = [
    '| frame | from | members |',
    '|---|---|---|',
    frame('request', 'broker', managerRequestSchema),
    frame('answer', 'server', managerResultAnswerSchema),
    frame('error answer', 'server', managerErrorAnswerSchema),
    frame('`error`', 'server', managerErrorBodySchema),
    frame('event', 'server', managerEventSchema),
    frame('`resync` `begin` record', 'server', resyncBeginSchema),
    frame('`resync` `chunk` record', 'server', resyncChunkSchema),
    frame('`resync` `end` record', 'server', resyncEndSchema),
    frame('`Ping` result', 'server', pingResultSchema),
  ];

  const events = ['| family | kind | ops | record | delete carries | notes |', '|---|---|---|---|---|---|'];
  for (const family of FAMILIES) {
    for (const kind of changeKindsOf(family)) {
      const spec = CHANGE_EVENTS[family][kind]!;
      const recordOf = (group: 'put' | 'delete') =>
        (document.components.messages[messageKey(family, kind, group)].payload.properties as Record<string, Json>)
          .record;
      const put = recordText(
        spec.ops.some((op) => op !== 'delete') ? recordOf('put') : writer.json(spec.record),
        schemas,
      );
      const deleted = spec.ops.includes('delete') ? recordText(recordOf('delete'), schemas) : '';
      const snapshot = spec.snapshot ? '' : 'Never in a snapshot. ';
      events.push(
        `| ${family} | ${code(kind)} | ${spec.ops.join(', ')} | ${cell(put)} | ${cell(deleted)} | ${cell(`${snapshot}${spec.note ?? ''}`.trim())} |`,
      );
    }
  }
  return new Map([
    ['frames', frames.join('\n')],
    ['login-fields', login.join('\n')],
    ['change-events', events.join('\n')],
  ]);
}

/** The document's text as the file holds it. */
export function managerProtocolAsyncApiText(): string {
  return `${JSON.stringify(managerProtocolAsyncApi(), null, 2)}\n`;
}
