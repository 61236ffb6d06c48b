/**
 * The manager protocol: how the broker talks to a trading server (the simulator, or a bridge next to a real server).
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
export type EventKind =
  | 'users' | 'trades' | 'ticks' | 'symbols' | 'groups' | 'online' | 'margin'
  | 'positions' | 'orders' | 'deals' | 'news' | 'mail'
  | 'newsBodies' | 'symbolGroups' | 'symbolSessions' | 'symbolInfo'
  | 'resync';

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

/** Commands every server answers, whatever the family. */
export interface LoginArgs {
  login: number;
  password: string;
  /** Ask for the change stream; a session used only for one-off live requests may set false. Default true. */
  pump?: boolean;
}

export interface LoginResult {
  server: string;
  family: Family;
  build: number;
  /** Manager rights of the logged-in manager, by name. */
  rights: string[];
}

/** Resync chunk size the simulator uses; bridges may choose another. */
export const RESYNC_CHUNK = 5000;

export function isAnswer(frame: unknown): frame is ManagerAnswer {
  return typeof frame === 'object' && frame !== null && 'id' in frame && ('result' in frame || 'error' in frame);
}

export function isEvent(frame: unknown): frame is ManagerEvent {
  return typeof frame === 'object' && frame !== null && 'event' in frame;
}
