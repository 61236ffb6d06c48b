/**
 * The manager protocol: how the broker talks to a trading server (the simulator, or a bridge next to a real server).
 * Normative text: docs/manager-protocol.md. The zod schemas below are the one source of the frames' and records'
 * shapes: the TypeScript types are inferred from them, the broker checks a login answer and the bridge kit a login with
 * them, and the AsyncAPI document (docs/manager-protocol.asyncapi.json, shared/protocolAsyncApi.ts) and the generated
 * tables of docs/manager-protocol.md are written from them. A record that is a contract record is named here, not
 * restated: `contractRecord('PF4User')` checks an object and the document references the contract's schema.
 *
 * JSON text frames over one WebSocket per manager session, at `ws://host:port/<server>` where `<server>` names the
 * trading server inside the process (one process may serve several). The first request must be `login`; anything
 * else before it is answered with `NotEnoughRights` / `ErrPermissions`.
 *
 *   request   {id, cmd, args}                 broker → server
 *   answer    {id, result} | {id, error}      server → broker, `error.code` is the platform's numeric result code
 *   event     {event, op, record}             server → broker, pushed after login
 *
 * After a successful login the server streams a resync snapshot (`resync` begin, chunks, end) and then pushes a change
 * event for every change of what the broker caches. A bridge must keep that order: every event after `end` is newer
 * than the snapshot.
 */

import { z } from 'zod';
import { isInt64, type Int64 } from './int64.js';
import { dateTime, int32 } from './records/primitives.js';

/** The platform families a trading server belongs to, each with its own records, commands and result codes. Every
 * process names a family with this type; code that walks all of them walks this list. */
export const FAMILIES = ['PF4', 'PF5'] as const;
export type Family = (typeof FAMILIES)[number];

// ---- names for the document ------------------------------------------------------------------------------------

/**
 * The protocol's own records by name: the AsyncAPI document gives each a component of that name and references it
 * wherever it appears. Filled as the schemas below are made; names are unique.
 */
export const PROTOCOL_RECORDS = new Map<z.ZodType, string>();
function named<T extends z.ZodType>(name: string, schema: T): T {
  if ([...PROTOCOL_RECORDS.values()].includes(name)) throw new Error(`two protocol records are named ${name}`);
  PROTOCOL_RECORDS.set(schema, name);
  return schema;
}

/** Contract records carried by name (`shared/records/`, the components of the gateway's OpenAPI document). */
export const CONTRACT_RECORDS = new Map<z.ZodType, string>();

/** Schemas zod cannot write as JSON Schema, with the JSON Schema the document gives them. */
export const JSON_FORMS = new Map<z.ZodType, Readonly<Record<string, unknown>>>();

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A contract record (`shared/records/contract.ts`) as a frame carries it: checked here as an object only, since the
 * broker shapes it on arrival (members the contract lacks dropped, missing ones filled: `shared/records/shape.ts`).
 */
export function contractRecord(name: string, description?: string): z.ZodType<Record<string, unknown>> {
  const object = z.custom<Record<string, unknown>>(isObject, { error: `must be a ${name} record (a JSON object)` });
  CONTRACT_RECORDS.set(object, name);
  return description === undefined ? object : object.describe(description);
}

/** What the document says of every 64-bit integer. */
export const INT64_TEXT =
  'a 64-bit integer: beyond 2^53 − 1 it travels as bare digits (never quoted, never with a fraction or an exponent), read and written exactly';

/** A 64-bit integer as the lossless JSON reads it (a safe number, or a bigint beyond 2^53 − 1). */
const int64 = z.custom<Int64>(isInt64, { error: 'must be a 64-bit integer, written in digits' });
JSON_FORMS.set(int64, { type: 'integer', format: 'int64', description: INT64_TEXT });
// The contract's date-time, written as JSON Schema's (zod writes a pattern alone for a date-time that may lack an offset).
JSON_FORMS.set(dateTime, { type: 'string', format: 'date-time' });

// ---- frames ------------------------------------------------------------------------------------------------------

const requestId = z
  .int()
  .min(1)
  .describe('a positive integer, unique on the connection; the answer carries it back (written first in the answer)');

export const managerRequestSchema = named(
  'ManagerRequest',
  z
    .object({
      id: requestId,
      cmd: z.string().min(1).describe('the command name'),
      args: z
        .record(z.string(), z.unknown())
        .optional()
        .describe("the command's arguments, an object; left out when the command takes none (Ping)"),
    })
    .describe('A request, broker → server: one answer comes back for each, in any order.'),
);
export type ManagerRequest = z.infer<typeof managerRequestSchema>;

export const managerErrorBodySchema = named(
  'ManagerError',
  z
    .object({
      code: z.int().describe("the family's numeric result code (shared/resultCodes.ts)"),
      message: z.string().describe('what went wrong, naming the field, key or command'),
    })
    .describe('Why a request failed.'),
);
export type ManagerErrorBody = z.infer<typeof managerErrorBodySchema>;

export const managerResultAnswerSchema = z
  .object({
    id: requestId,
    result: z.unknown().describe("the command's result, any JSON value (null included)"),
  })
  .describe('A successful answer, server → broker.');

export const managerErrorAnswerSchema = z
  .object({
    id: requestId,
    error: managerErrorBodySchema,
  })
  .describe('A refused request, server → broker. A frame with both result and error is read as the error.');

/** An answer: the error form first, as a frame with both is read as the error. */
export const managerAnswerSchema = z.union([managerErrorAnswerSchema, managerResultAnswerSchema]);
export type ManagerAnswer = z.infer<typeof managerAnswerSchema>;

/** What a change event is about: every kind some family pushes. Which family pushes which, with the ops and the
 * records of each and the snapshot's kinds: CHANGE_EVENTS below. */
export const CHANGE_KINDS = [
  'users',
  'trades',
  'ticks',
  'symbols',
  'groups',
  'online',
  'margin',
  'positions',
  'orders',
  'deals',
  'news',
  'mail',
  'newsBodies',
  'symbolGroups',
  'symbolSessions',
  'symbolInfo',
] as const;
/** A kind of change event (the tables a cache is built from). */
export type ChangeKind = (typeof CHANGE_KINDS)[number];
export const EVENT_KINDS = [...CHANGE_KINDS, 'resync'] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

/** A change event's ops: `add` and `update` carry the whole record (the broker puts it by key), `delete` its key. */
export const CHANGE_OPS = ['add', 'update', 'delete'] as const;
export type ChangeOp = (typeof CHANGE_OPS)[number];
/** The snapshot's ops, in the order they come. */
export const RESYNC_OPS = ['begin', 'chunk', 'end'] as const;
export const EVENT_OPS = [...CHANGE_OPS, ...RESYNC_OPS] as const;
export type EventOp = (typeof EVENT_OPS)[number];

export const managerEventSchema = named(
  'ManagerEvent',
  z
    .object({
      event: z.enum(EVENT_KINDS).describe('a change kind, or resync for the snapshot'),
      op: z.enum(EVENT_OPS),
      /** The full record after the change (add/update), the record's key fields (delete; a PF4 trade delete carries the
       *  final record), or for `resync`: begin → {server, family}, chunk → {kind, items}, end → {counts}. */
      record: z
        .unknown()
        .describe(
          'add/update: the whole record after the change; delete: its key fields; resync: begin {server, family}, chunk {kind, items}, end {counts}',
        ),
    })
    .describe('An event, server → broker, pushed after login: it has no id.'),
);
export type ManagerEvent = z.infer<typeof managerEventSchema>;

export const resyncBeginSchema = named(
  'ResyncBegin',
  z
    .object({
      server: z.string().min(1).describe("the trading server's name"),
      family: z.enum(FAMILIES),
    })
    .describe('The record of resync begin: a whole new snapshot follows (the broker reads nothing of it).'),
);
export type ResyncBegin = z.infer<typeof resyncBeginSchema>;

export const resyncChunkSchema = named(
  'ResyncChunk',
  z
    .object({
      kind: z.enum(CHANGE_KINDS).describe('the change kind whose records these are'),
      items: z.array(z.unknown()).describe('records of the kind, as its add and update events carry them'),
    })
    .describe('The record of a resync chunk.'),
);
export type ResyncChunk = z.infer<typeof resyncChunkSchema>;

export const resyncEndSchema = named(
  'ResyncEnd',
  z
    .object({
      counts: z
        .partialRecord(z.enum(CHANGE_KINDS), z.int().min(0))
        .describe('the records sent of each kind of the snapshot'),
    })
    .describe('The record of resync end: the snapshot is complete; every event after it is newer.'),
);
export type ResyncEnd = z.infer<typeof resyncEndSchema>;

/** Ping's result. */
export const pingResultSchema = named(
  'PingResult',
  z
    .object({
      time: dateTime.describe("the server's clock, ISO 8601 in UTC"),
    })
    .describe(
      "Ping's result. Once the snapshot has ended it comes after the events of every change made before the Ping arrived.",
    ),
);
export type PingResult = z.infer<typeof pingResultSchema>;

// ---- change events per family and kind ---------------------------------------------------------------------------

/** What one change kind of one family carries. */
export interface ChangeEventSpec {
  /** The ops a server sends of this kind (the reference server's), in CHANGE_OPS order. */
  readonly ops: readonly ChangeOp[];
  /** The record an add or update carries, and the items of the kind's snapshot chunks. */
  readonly record: z.ZodType;
  /** What a delete carries: the kind's key field (`broker/cache/pumpCache.ts` KINDS), present when `ops` has delete. */
  readonly deleted?: z.ZodType;
  /** Whether the resync snapshot carries the kind. */
  readonly snapshot: boolean;
  /** What a bridge must know beyond the shapes. */
  readonly note?: string;
}

const pf4LoginKey = named('PF4LoginKey', z.object({ login: int32 }).describe("A PF4 record's key: the login."));
const pf4SymbolKey = named(
  'PF4SymbolKey',
  z.object({ symbol: z.string().min(1) }).describe("A PF4 record's key: the symbol."),
);
const pf4NewsKey = named('PF4NewsKey', z.object({ key: int32 }).describe("A news topic's key."));
const pf5PositionKey = named('PF5PositionKey', z.object({ position: int64 }).describe("A PF5 position's key."));
const pf5OrderKey = named('PF5OrderKey', z.object({ order: int64 }).describe("A PF5 order's key."));
const pf5DealKey = named('PF5DealKey', z.object({ deal: int64 }).describe("A PF5 deal's key."));

/** `{symbol, time, bid, ask}`: a symbol's last price. */
const tick = contractRecord('PF4TickInfo');

/** A PF4 group as the change stream carries it: the record with its nested security arrays. */
export const pf4GroupRecordSchema = named(
  'PF4GroupRecord',
  z
    .intersection(
      contractRecord('PF4Group'),
      z.object({
        secGroups: z
          .array(contractRecord('PF4GroupSec'))
          .length(32)
          .describe('the 32 security entries, by security group'),
        secMargins: z
          .array(contractRecord('PF4GroupMargin'))
          .describe('the per-symbol overrides, of which the first secMarginsTotal are in use'),
      }),
    )
    .describe('A PF4Group with its security entries and margin overrides.'),
);

export const pf4SymbolGroupSlotSchema = named(
  'PF4SymbolGroupSlot',
  z
    .intersection(
      z.object({
        pos: z.int().min(0).max(31).describe('the slot, 0 to 31'),
      }),
      contractRecord('PF4SymbolGroup'),
    )
    .describe('One of the 32 security (symbol) group slots: its position and its PF4SymbolGroup.'),
);

export const pf4SymbolSessionsSchema = named(
  'PF4SymbolSessions',
  z
    .object({
      symbol: z.string().min(1),
      days: z
        .array(contractRecord('PF4SymbolDaySessions'))
        .max(7)
        .describe('the sessions of each weekday, Sunday first'),
    })
    .describe("A configured symbol's quote and trade sessions."),
);

export const pf4NewsBodySchema = named(
  'PF4NewsBody',
  z
    .object({
      key: int32.describe("the news topic's key"),
      body: z.string(),
    })
    .describe('The body of a news topic.'),
);

export const pf5MarginCallSchema = named(
  'PF5MarginCall',
  z
    .object({
      login: int64,
      group: z.string(),
      type: z.enum(['MarginCall', 'StopOut']).describe('the level crossed'),
      direction: z
        .enum(['Enter', 'Leave'])
        .describe('Enter: the account went below the level; Leave: it came back above it'),
      time: dateTime,
      marginLevel: z.number().describe("the account's margin level, percent"),
      equity: z.number(),
      margin: z.number(),
    })
    .describe("A PF5 account crossing its group's margin call or stop-out level."),
);

/**
 * Every change kind each family's servers push, in the order of the docs' table: the snapshot's kinds in the
 * snapshot's order, then the others.
 */
export const CHANGE_EVENTS: { readonly [F in Family]: Readonly<Partial<Record<ChangeKind, ChangeEventSpec>>> } = {
  PF4: {
    users: {
      ops: ['add', 'update', 'delete'],
      record: contractRecord('PF4User'),
      deleted: pf4LoginKey,
      snapshot: true,
    },
    trades: {
      ops: ['add', 'update', 'delete'],
      record: contractRecord('PF4Trade'),
      snapshot: true,
      deleted: contractRecord('PF4Trade', "the trade's final record, or {order} alone"),
      note:
        "A delete carries the trade's final record (`tradeRecordState` `ClosedNormal`, `ClosedPart` or `Deleted`, " +
        '`closeTime`, `closePrice`), which the broker keeps among the recently closed trades; a delete with the key alone ' +
        'removes the trade and keeps nothing. An update in a closed state is read as the delete.',
    },
    ticks: {
      ops: ['update'],
      record: tick,
      snapshot: true,
      note: "Also moves the symbol's `symbolInfo` in the broker.",
    },
    symbols: {
      ops: ['add', 'update', 'delete'],
      record: contractRecord('PF4SymbolConfig'),
      deleted: pf4SymbolKey,
      snapshot: true,
      note: 'The active set: a hidden symbol is deleted. A delete also removes its `symbolInfo`.',
    },
    groups: { ops: ['update'], record: pf4GroupRecordSchema, snapshot: true },
    margin: {
      ops: ['update', 'delete'],
      record: contractRecord('PF4MarginLevel'),
      deleted: pf4LoginKey,
      snapshot: true,
      note: 'One per login with open trades or orders; the delete when the login has none left.',
    },
    online: {
      ops: ['add', 'update', 'delete'],
      record: contractRecord('PF4Online'),
      deleted: pf4LoginKey,
      snapshot: true,
    },
    news: {
      ops: ['add', 'delete'],
      record: contractRecord('PF4NewsTopic'),
      deleted: pf4NewsKey,
      snapshot: true,
      note: 'The topic without its body; a delete also removes its body.',
    },
    symbolGroups: { ops: ['update'], record: pf4SymbolGroupSlotSchema, snapshot: true },
    symbolSessions: {
      ops: ['delete'],
      record: pf4SymbolSessionsSchema,
      deleted: pf4SymbolKey,
      snapshot: true,
      note: "Every configured symbol's, hidden ones too; deleted with the symbol's configuration.",
    },
    symbolInfo: {
      ops: ['update'],
      record: contractRecord('PF4SymbolInfo'),
      snapshot: true,
      note:
        'Sent whole only when a consumer cannot derive it from ticks and symbol records (a symbol back in the active ' +
        "set, a chart write changing the day's bar, ticks coalesced while held).",
    },
    newsBodies: {
      ops: ['update'],
      record: pf4NewsBodySchema,
      snapshot: false,
      note: 'After a `NewsBodyRequest`, to every pumping session; kept by the broker while its topic is listed.',
    },
    mail: { ops: ['add'], record: contractRecord('PF4MailBox'), snapshot: false, note: 'The broker keeps no mail.' },
  },
  PF5: {
    users: { ops: ['add', 'update'], record: contractRecord('PF5User'), snapshot: true },
    positions: {
      ops: ['add', 'update', 'delete'],
      record: contractRecord('PF5Position'),
      deleted: pf5PositionKey,
      snapshot: true,
    },
    orders: { ops: ['add', 'delete'], record: contractRecord('PF5Order'), deleted: pf5OrderKey, snapshot: true },
    deals: { ops: ['add', 'update', 'delete'], record: contractRecord('PF5Deal'), deleted: pf5DealKey, snapshot: true },
    ticks: { ops: ['update'], record: tick, snapshot: true },
    symbols: { ops: ['update'], record: contractRecord('PF5Symbol'), snapshot: true },
    groups: { ops: ['update'], record: contractRecord('PF5ConGroup'), snapshot: true },
    margin: {
      ops: ['add'],
      record: pf5MarginCallSchema,
      snapshot: false,
      note: "A notification, streamed to the gateway's clients; never cached.",
    },
  },
};

/** The change kinds of `family`, in CHANGE_EVENTS order. */
export function changeKindsOf(family: Family): ChangeKind[] {
  return Object.keys(CHANGE_EVENTS[family]) as ChangeKind[];
}

/**
 * The event frames a `family` server sends for one change kind and op group (`put`: add and update; `delete`), with
 * the kind's record in place: what the AsyncAPI document gives as one message each.
 */
export function changeEventSchema(family: Family, kind: ChangeKind, group: 'put' | 'delete'): z.ZodObject {
  const spec = CHANGE_EVENTS[family][kind];
  if (!spec) throw new Error(`${family} servers push no ${kind} events`);
  const ops = spec.ops.filter((op) => (group === 'delete') === (op === 'delete'));
  if (ops.length === 0)
    throw new Error(`${family} ${kind} events have no ${group === 'put' ? 'add or update' : 'delete'}`);
  const record = group === 'put' ? spec.record : spec.deleted;
  if (!record) throw new Error(`${family} ${kind} has a delete without a key record`);
  return z.object({
    event: z.literal(kind),
    op: ops.length === 1 ? z.literal(ops[0]) : z.enum(ops as [ChangeOp, ...ChangeOp[]]),
    record,
  });
}

/** A snapshot chunk of one `family` kind, with its records in place. */
export function resyncChunkOf(
  family: Family,
  kind: ChangeKind,
): z.ZodObject<{ kind: z.ZodLiteral<ChangeKind>; items: z.ZodArray<z.ZodType> }> {
  const spec = CHANGE_EVENTS[family][kind];
  if (!spec?.snapshot) throw new Error(`the ${family} snapshot has no ${kind}`);
  return z.object({ kind: z.literal(kind), items: z.array(spec.record) });
}

/**
 * The protocol versions, oldest first. A version names the whole contract of docs/manager-protocol.md: a change a
 * server or a broker of the previous version would misread gets a new number. The broker's login lists those it
 * speaks (`LoginArgs.versions`); the server answers with the one it chose (`LoginResult.version`), the newest both
 * speak.
 */
export const PROTOCOL_VERSIONS = [1] as const;
export type ProtocolVersion = (typeof PROTOCOL_VERSIONS)[number];

/** Bounds of the login's lists, so that neither side reads an unbounded answer before the session is up. */
export const LOGIN_LIMITS = { versions: 16, commands: 4096, nameLength: 64, rights: 256 } as const;

const name = z.string().min(1).max(LOGIN_LIMITS.nameLength);

export const loginArgsSchema = named(
  'LoginArgs',
  z
    .object({
      login: z.int().min(1).describe('the manager login'),
      password: z.string().max(1024).describe('the manager password'),
      /** Ask for the change stream; a session used only for one-off live requests may set false. Default true. */
      pump: z
        .boolean()
        .optional()
        .describe('true (default): the snapshot, then change events; false: live requests only'),
      versions: z
        .array(z.int().min(1))
        .min(1)
        .max(LOGIN_LIMITS.versions)
        .optional()
        .describe(
          'the protocol versions the client speaks, oldest first; absent: [1] (the protocol before negotiation was version 1)',
        ),
    })
    .describe("The login's arguments: the first request on a connection must be login."),
);
export type LoginArgs = z.infer<typeof loginArgsSchema>;

export const capabilitiesSchema = named(
  'Capabilities',
  z
    .object({
      commands: z
        .array(name)
        .max(LOGIN_LIMITS.commands)
        .describe('every command this server answers (Ping included; login is implied)'),
      events: z
        .array(z.enum(CHANGE_KINDS))
        .max(CHANGE_KINDS.length)
        .describe('the change-event kinds this server pushes; its snapshot holds these kinds only'),
    })
    .describe('What the server answers and pushes.'),
);
export type Capabilities = z.infer<typeof capabilitiesSchema>;

export const loginResultSchema = named(
  'LoginResult',
  z
    .object({
      version: z
        .int()
        .min(1)
        .describe('the protocol version chosen: the newest of LoginArgs.versions the server speaks'),
      server: z.string().min(1).max(256).describe("the trading server's name"),
      family: z.enum(FAMILIES).describe("the server's platform family"),
      build: z.int().min(1).describe("the trading server's build"),
      rights: z.array(name).max(LOGIN_LIMITS.rights).describe("the logged-in manager's rights, by name"),
      capabilities: capabilitiesSchema,
    })
    .describe("The login's result: the session is up; with pump the snapshot follows."),
);
export type LoginResult = z.infer<typeof loginResultSchema>;

/** What a login without `versions` is taken to offer. */
export const UNNAMED_VERSIONS: readonly number[] = [1];

/** The newest version both lists hold, or undefined when they share none. */
export function chooseVersion(
  offered: readonly number[],
  spoken: readonly number[] = PROTOCOL_VERSIONS,
): number | undefined {
  const common = offered.filter((v) => spoken.includes(v));
  return common.length === 0 ? undefined : Math.max(...common);
}

/**
 * The WebSocket close codes a server sends, and what each means to the broker (which handles every end of a
 * connection alike: the session is down, requests in flight fail, it reconnects with backoff).
 */
export const CLOSE_CODES = {
  /** A frame that is not JSON text, or a request without a numeric id. */
  badFrame: 1007,
  /** A command the manager has no right to, where the family drops the connection instead of answering. */
  rightDropped: 1008,
  /** A frame past the receiver's bound. */
  tooBig: 1009,
  /** The server failed the session: its snapshot could not be read or sent, its state not set up (WebSocket's "internal error"). */
  snapshotFailed: 1011,
  /** The trading server restarts. */
  restart: 1012,
  /** The session is too far behind: more queued on the socket, or held, than the server keeps. */
  tooSlow: 1013,
  /**
   * The connection broke the server's login policy: it did not log in within the login deadline, or too many of its
   * logins were refused (the private-use mirror of 1008, which names a dropped right).
   */
  loginPolicy: 4008,
} as const;

/** What each close code means, in a sentence (the AsyncAPI document's list of them). */
export const CLOSE_CODE_MEANINGS: Readonly<Record<keyof typeof CLOSE_CODES, string>> = {
  badFrame: 'a frame that is not JSON text (or is binary), or a request without a numeric id',
  rightDropped: 'a command the manager has no right to, where the family drops the connection instead of answering',
  tooBig: "a frame past the receiver's bound",
  snapshotFailed:
    'the server failed the session (its snapshot could not be read or sent, or its state could not be set up): the broker reconnects and takes a whole new snapshot',
  restart: 'the trading server restarts',
  tooSlow: 'the session is too far behind: more queued on the socket, or held, than the server keeps',
  loginPolicy:
    "the connection did not log in within the server's login deadline, or too many of its logins were refused",
};

/** The least a server must accept in one frame from the broker: a request with a long id list fits. */
export const SERVER_MIN_FRAME_BYTES = 16 * 1024 * 1024;

/** Resync chunk size the simulator uses; bridges may choose another. */
export const RESYNC_CHUNK = 5000;

export function isAnswer(frame: unknown): frame is ManagerAnswer {
  return typeof frame === 'object' && frame !== null && 'id' in frame && ('result' in frame || 'error' in frame);
}

export function isEvent(frame: unknown): frame is ManagerEvent {
  return typeof frame === 'object' && frame !== null && 'event' in frame;
}
