/**
 * Edge replicas of a platform's hot cached tables, fed over a link object's own broker link (`shared/frames.ts`).
 *
 * A link object sends `{id, platform, op: "#replicate", args: {rep, maxRows}, timeoutMs}`; the broker answers
 * `{id, ok: true, data: {rep, tables}}` (the hot tables of the platform's family) and from then on pushes frames
 * without an id, numbered `seq` 0, 1, 2, … per replication:
 *
 * - `begin`: a snapshot starts; everything the replica held is forgotten; `tables` are those the snapshot carries
 *   (a table with more than `maxRows` rows is left out, and its reads fall through to the broker);
 * - `rows`: rows of one table of the snapshot, each `[key, json]`, `json` the row exactly as the broker answers it;
 * - `end`: the snapshot is whole: the replica is in sync from here, at the cache's position `pos`
 *   (`shared/positions.ts`) when the snapshot was taken;
 * - `changes`: ordered changes since the previous frame, each `[table, key, json | null]` (null: the row is gone);
 *   changes to one key within one turn of the broker's event loop are conflated to the last; `pos` is the cache's
 *   position once they are applied. A large snapshot goes out a part at a time (the broker waits while the link's
 *   buffer is full); the changes made meanwhile come in one `changes` frame without `pos` just before its `end`;
 * - `drop`: the table grew past `maxRows` (or cannot be replicated any more): it leaves the replica until the next
 *   snapshot;
 * - `stop`: the replication ended (platform removed, link congested); the replica is out of sync.
 *
 * With `window`, the edge acknowledges the frames it applied (`#replicated`) and the broker keeps at most `window`
 * `rows` frames unacknowledged, so a large snapshot never fills the link ahead of the calls' answers.
 *
 * A broker cache resync is sent as a new snapshot (`begin` … `end`). A frame whose `seq` is not the next expected,
 * or the link's loss, leaves the replica out of sync: reads fall through to the broker until a new snapshot lands.
 * A later `#replicate` on the same link and platform replaces the earlier one.
 */
import type { Family } from './protocol.js';

export const REPLICATE_OP = '#replicate';
/**
 * `{rep, seq}`: the edge has applied the frames of replication `rep` up to `seq`. Answered `{ok: true, data: null}`.
 * Sent only for a replication asked with `window`.
 */
export const REPLICATED_OP = '#replicated';

export interface ReplicateArgs {
  /** Chosen by the edge, echoed in every frame of this replication (frames of an earlier one are ignored). */
  rep: number;
  /** Tables with more rows than this are not replicated. */
  maxRows: number;
  /**
   * The snapshot's `rows` frames the edge may have unapplied: the broker sends no more until a `#replicated` names a
   * later `seq`, so a link's call answers never wait behind more than this many rows frames. Absent: no window.
   */
  window?: number;
}

/**
 * The window an edge asks for: at 500 rows a frame, 16,000 rows ahead of what it applied. Each window costs a round
 * trip, so a far region takes a large snapshot at about this many rows per round trip, while a call answer waits
 * behind at most this many rows frames.
 */
export const REPLICA_WINDOW_FRAMES = 32;

export type ReplicaKey = number | string;

export type ReplicaFrame =
  | { rep: number; seq: number; begin: { tables: string[] } }
  | { rep: number; seq: number; table: string; rows: Array<[ReplicaKey, string]> }
  | { rep: number; seq: number; end: true; pos?: string }
  | { rep: number; seq: number; changes: Array<[string, ReplicaKey, string | null]>; pos?: string }
  | { rep: number; seq: number; drop: string }
  | { rep: number; seq: number; stop: string };

/**
 * The tables replicated per family: quotes, symbols, groups, accounts, open trades (PF5: positions and orders) and
 * PF4's recently closed trades. Margins, online sessions, news and PF5 deals stay on the broker: they change with
 * every tick, are per session, or are read only through an index.
 */
export const REPLICATED_TABLES: Readonly<Record<Family, readonly string[]>> = {
  PF4: ['users', 'ticks', 'symbolInfo', 'symbolSessions', 'groups', 'groupSecurities', 'trades', 'closedTrades'],
  PF5: ['users', 'symbols', 'groups', 'positions', 'orders'],
};

/** Rows per `rows` frame of a snapshot. */
export const REPLICA_CHUNK_ROWS = 500;

/** Default bound on a replicated table's rows (`EDGE_REPLICA_MAX_ROWS`). */
export const DEFAULT_REPLICA_MAX_ROWS = 10_000;
/** Largest memory bound of an edge replica's table (`EDGE_REPLICA_MAX_ROWS`): within a link object's 128 MB. */
export const MAX_REPLICA_MAX_ROWS = 100_000;
/** Default bound on a table an edge replica keeps in its object's storage (`EDGE_REPLICA_STORED_ROWS`). */
export const DEFAULT_REPLICA_STORED_ROWS = 1_000_000;
/** Largest `maxRows` a broker accepts (and `EDGE_REPLICA_STORED_ROWS` may be): a snapshot's work is bounded. */
export const MAX_REPLICA_STORED_ROWS = 2_000_000;
