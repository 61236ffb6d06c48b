/**
 * The manager protocol: how the broker talks to a trading server (the simulator, or a bridge next to a real server).
 * Normative text: docs/manager-protocol.md. The zod schemas below are the one source of the login's shape, for the
 * broker's check of a login answer, the bridge kit's check of a login, and the AsyncAPI document.
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

/** The platform families a trading server belongs to, each with its own records, commands and result codes. Every
 * process names a family with this type; code that walks all of them walks this list. */
import { z } from 'zod';

export const FAMILIES = ['PF4', 'PF5'] as const;
export type Family = (typeof FAMILIES)[number];

export interface ManagerRequest {
  id: number;
  cmd: string;
  args?: Record<string, unknown>;
}

export interface ManagerErrorBody {
  /** The platform's numeric result code (see resultCodes.ts). */
  code: number;
  message: string;
}

export type ManagerAnswer =
  | { id: number; result: unknown }
  | { id: number; error: ManagerErrorBody };

/** What a change event is about.
 *
 * PF4 servers push users, trades, ticks, symbols, groups, margin, online, news, newsBodies, symbolGroups,
 * symbolSessions, symbolInfo and mail; PF5 servers push users, positions, orders, deals, ticks, symbols and groups.
 * PF4 specifics:
 * - `trades` delete carries the trade's final record (`tradeRecordState` Closed* or Deleted, `closeTime`,
 *   `closePrice`), not the key alone; the trade leaves the open trades and a cache keeps it among the recently closed.
 * - `groups` records carry the group's nested arrays: `secGroups` (the 32 security entries, PF4GroupSec) and
 *   `secMargins` (the per-symbol overrides, PF4GroupMargin, of which the first `secMarginsTotal` are in use).
 * - `margin`: one margin level (PF4MarginLevel) per login with open trades or orders; delete `{login}` when the
 *   login has none left.
 * - `newsBodies` update `{key, body}`: the body of a news topic, pushed after a `NewsBodyRequest` for it.
 * - `symbolGroups` update `{pos, name, description}`: one of the 32 security (symbol) group slots.
 * - `symbolSessions` `{symbol, days}` (7 PF4SymbolDaySessions, Sunday first) per configured symbol; delete `{symbol}`.
 * - `symbolInfo` update: a PF4SymbolInfo sent whole when a consumer cannot derive it from ticks (a symbol back in the
 *   active set, a chart write changing the day's bar, ticks coalesced while held).
 *
 * Resync kinds, in this order: PF4 users, trades, ticks, symbols, groups, margin, online, news, symbolGroups,
 * symbolSessions, symbolInfo (news bodies, mail and closed trades are not part of a snapshot); PF5 users, positions,
 * orders, deals, ticks, symbols, groups. */
export const CHANGE_KINDS = [
  'users', 'trades', 'ticks', 'symbols', 'groups', 'online', 'margin',
  'positions', 'orders', 'deals', 'news', 'mail',
  'newsBodies', 'symbolGroups', 'symbolSessions', 'symbolInfo',
] as const;
/** A kind of change event (the tables a cache is built from). */
export type ChangeKind = (typeof CHANGE_KINDS)[number];
export type EventKind = ChangeKind | 'resync';

export type EventOp = 'add' | 'update' | 'delete' | 'begin' | 'chunk' | 'end';

export interface ManagerEvent {
  event: EventKind;
  op: EventOp;
  /** The full record after the change (add/update), the record's key fields (delete; a PF4 trade delete carries the
   *  final record), or for `resync`:
   *  begin → {server, family}, chunk → {kind, items}, end → {counts}. */
  record: unknown;
}

export interface ResyncChunk {
  kind: Exclude<EventKind, 'resync'>;
  items: unknown[];
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

export const loginArgsSchema = z.object({
  login: z.int().min(1).describe('the manager login'),
  password: z.string().max(1024).describe('the manager password'),
  /** Ask for the change stream; a session used only for one-off live requests may set false. Default true. */
  pump: z.boolean().optional().describe('true (default): the snapshot, then change events; false: live requests only'),
  versions: z.array(z.int().min(1)).min(1).max(LOGIN_LIMITS.versions).optional()
    .describe('the protocol versions the client speaks, oldest first; absent: [1] (the protocol before negotiation was version 1)'),
}).describe('LoginArgs');
export type LoginArgs = z.infer<typeof loginArgsSchema>;

export const capabilitiesSchema = z.object({
  commands: z.array(name).max(LOGIN_LIMITS.commands)
    .describe('every command this server answers (Ping included; login is implied)'),
  events: z.array(z.enum(CHANGE_KINDS)).max(CHANGE_KINDS.length)
    .describe('the change-event kinds this server pushes; its snapshot holds these kinds only'),
}).describe('Capabilities');
export type Capabilities = z.infer<typeof capabilitiesSchema>;

export const loginResultSchema = z.object({
  version: z.int().min(1).describe('the protocol version chosen: the newest of LoginArgs.versions the server speaks'),
  server: z.string().min(1).max(256).describe('the trading server\'s name'),
  family: z.enum(FAMILIES),
  build: z.int().min(1).describe('the trading server\'s build'),
  rights: z.array(name).max(LOGIN_LIMITS.rights).describe('the logged-in manager\'s rights, by name'),
  capabilities: capabilitiesSchema,
}).describe('LoginResult');
export type LoginResult = z.infer<typeof loginResultSchema>;

/** What a login without `versions` is taken to offer. */
export const UNNAMED_VERSIONS: readonly number[] = [1];

/** The newest version both lists hold, or undefined when they share none. */
export function chooseVersion(offered: readonly number[], spoken: readonly number[] = PROTOCOL_VERSIONS): number | undefined {
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
  /** The trading server restarts. */
  restart: 1012,
  /** The session is too far behind: more queued on the socket, or held, than the server keeps. */
  tooSlow: 1013,
} as const;

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
