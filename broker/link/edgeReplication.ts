/**
 * The broker side of edge replicas (`shared/replication.ts`): per edge link, the `#replicate` subscriptions of its
 * link object, each a snapshot of the platform's hot tables followed by their ordered changes.
 *
 * Rows go out as the JSON text the broker answers them with (the text a packed table keeps, or `recordJson`, computed
 * once per row version and shared with the cached reads), so the edge stores and answers them byte for byte. Changes are collected per turn of the
 * event loop (a key changed twice in one turn is sent once, with its last value) and sent in one frame. A table that
 * grows past the replica's bound is dropped from it; a link whose socket buffers more than `MAX_BUFFERED_BYTES` is
 * too slow to follow the stream and its replication stops (the edge falls through to the broker and asks again). A
 * replication holds its platform in use while it runs (`use`), so a cold standby logs in for it and stays logged in.
 * A table filled by an event kind the trading server's latest login did not declare is not replicated: its reads go to
 * the broker, which refuses them naming the kind, rather than being answered from a table that stays empty.
 */
import type { CallFrame, CallFailed, CallOk } from '../../shared/frames.js';
import type { Family } from '../../shared/protocol.js';
import {
  MAX_REPLICA_STORED_ROWS,
  REPLICA_CHUNK_ROWS,
  REPLICATE_OP,
  REPLICATED_OP,
  REPLICATED_TABLES,
  type ReplicaFrame,
  type ReplicaKey,
  type ReplicateArgs,
} from '../../shared/replication.js';
import type { CacheFeed, CacheListener } from '../cache/cacheFeed.js';
import { eventKindOf, type PumpCache } from '../cache/pumpCache.js';
import type { CacheKey } from '../cache/keyedTable.js';

/** Finds a platform the broker serves, for `#replicate` frames. */
export type ReplicaSource = (platform: string) =>
  | {
      family: Family;
      cache: PumpCache;
      feed: CacheFeed;
      use?: () => { release(): void };
      /** A read fence standing on the platform (`TradePlatform.readFence`): the snapshot waits for it, as cached reads do. */
      readFence?: () => Promise<void> | undefined;
      /** What the trading server's latest login declared (`ManagerSession.declared`); none known: every kind. */
      session?: { readonly declared?: { readonly events: ReadonlySet<string> } };
    }
  | undefined;

/** A link buffering more than this is not keeping up with the change stream: its replications stop. */
export const MAX_BUFFERED_BYTES = 32 * 1024 * 1024;
/** A snapshot waits while its link buffers more than this, `SNAPSHOT_PAUSE_MS` at a time. */
export const SNAPSHOT_PAUSE_BYTES = 4 * 1024 * 1024;
export const SNAPSHOT_PAUSE_MS = 5;

export interface ReplicaSink {
  send(text: string): void;
  readonly bufferedAmount: number;
}

export const isReplicationOp = (op: string) => op === REPLICATE_OP || op === REPLICATED_OP;

/** The largest window a broker honours: a larger ask is taken as this. */
export const MAX_REPLICA_WINDOW = 256;

/** The replications of one edge link, by platform. */
export class EdgeReplication {
  private readonly byPlatform = new Map<string, Replication>();

  constructor(
    private readonly sink: ReplicaSink,
    private readonly source: ReplicaSource,
  ) {}

  handle(frame: CallFrame): void {
    if (frame.op === REPLICATED_OP) {
      this.acknowledged(frame);
      return;
    }
    const args = frame.args as Partial<ReplicateArgs> | undefined;
    const rep = args?.rep;
    const maxRows = args?.maxRows;
    const window = args?.window;
    if (
      !Number.isSafeInteger(rep) ||
      !Number.isSafeInteger(maxRows) ||
      (maxRows as number) < 0 ||
      (window !== undefined && (!Number.isSafeInteger(window) || window < 1))
    ) {
      this.refuse(
        frame,
        'Internal',
        'malformed call frame: #replicate needs an integer rep and maxRows, and a window of at least 1 if any',
      );
      return;
    }
    const platform = this.source(frame.platform);
    if (!platform) {
      this.refuse(frame, 'NotFound', 'trade platform not served by this broker');
      return;
    }
    const lease = platform.use?.();
    this.byPlatform.get(frame.platform)?.stop();
    const tables = REPLICATED_TABLES[platform.family];
    const replication = new Replication(
      this.sink,
      platform.cache,
      platform.feed,
      rep as number,
      Math.min(maxRows as number, MAX_REPLICA_STORED_ROWS),
      tables,
      platform.readFence ?? (() => undefined),
      (table) => platform.session?.declared?.events.has(eventKindOf(table)) ?? true,
      window === undefined ? undefined : Math.min(window, MAX_REPLICA_WINDOW),
      () => {
        lease?.release();
        if (this.byPlatform.get(frame.platform) === replication) this.byPlatform.delete(frame.platform);
      },
    );
    this.byPlatform.set(frame.platform, replication);
    this.sink.send(JSON.stringify({ id: frame.id, ok: true, data: { rep, tables } } satisfies CallOk));
    replication.start();
  }

  /** A `#replicated` from the edge: the replication it names may send further. */
  private acknowledged(frame: CallFrame): void {
    const args = frame.args as { rep?: unknown; seq?: unknown } | undefined;
    if (!Number.isSafeInteger(args?.rep) || !Number.isSafeInteger(args?.seq)) {
      this.refuse(frame, 'Internal', 'malformed call frame: #replicated needs an integer rep and seq');
      return;
    }
    this.byPlatform.get(frame.platform)?.acknowledged(args!.rep as number, args!.seq as number);
    this.sink.send(JSON.stringify({ id: frame.id, ok: true, data: null } satisfies CallOk));
  }

  /** The link closed: every replication on it ends. */
  close(): void {
    for (const r of [...this.byPlatform.values()]) r.stop();
    this.byPlatform.clear();
  }

  get size(): number {
    return this.byPlatform.size;
  }

  private refuse(frame: CallFrame, code: 'Internal' | 'NotFound', message: string): void {
    this.sink.send(
      JSON.stringify({ id: frame.id, ok: false, error: { code, managerCode: null, message } } satisfies CallFailed),
    );
  }
}

class Replication implements CacheListener {
  private seq = 0;
  private readonly replicated: Set<string>;
  private dirty = new Map<string, Set<CacheKey>>();
  private flushing: ReturnType<typeof setImmediate> | undefined;
  private unlisten: (() => void) | undefined;
  /** Set once a snapshot started going out; changes before it are part of it. */
  private snapshotSent = false;
  /** A snapshot is going out a part at a time (`snapshots` numbers them, so a resync's new one replaces it). */
  private snapshotting = false;
  private snapshots = 0;
  private pausing: ReturnType<typeof setTimeout> | undefined;
  /** The seq of each `rows` frame of the snapshot going out that the edge has not acknowledged yet, in order. */
  private unacked: number[] = [];
  /** Goes on with a snapshot waiting for an acknowledgement. */
  private resume: (() => void) | undefined;
  /** The last position sent, so a turn that moved only tables not replicated still tells the replica where it is. */
  private sentPos: string | undefined;
  private stopped = false;

  constructor(
    private readonly sink: ReplicaSink,
    private readonly cache: PumpCache,
    private readonly feed: CacheFeed,
    private readonly rep: number,
    private readonly maxRows: number,
    tables: readonly string[],
    private readonly readFence: () => Promise<void> | undefined,
    /** Whether the trading server declared the event kind that fills a table. */
    private readonly declared: (table: string) => boolean,
    /** The snapshot's `rows` frames that may be unacknowledged (`ReplicateArgs.window`); undefined: no window. */
    private readonly window: number | undefined,
    private readonly onStop: () => void,
  ) {
    this.replicated = new Set(tables);
  }

  start(): void {
    this.unlisten = this.feed.listen(this);
    const send = () => {
      if (this.stopped || this.snapshotSent) return;
      if (this.cache.ready) this.snapshot();
      else void this.cache.whenReady().then(send);
    };
    // After a move here, the snapshot is of a cache that has caught up with the trading server (a read fence).
    const fence = this.readFence();
    if (fence) void fence.then(send);
    else send();
  }

  changed(table: string, key: CacheKey): void {
    if (!this.snapshotSent) return;
    if (this.replicated.has(table)) {
      let keys = this.dirty.get(table);
      if (!keys) this.dirty.set(table, (keys = new Set()));
      keys.add(key);
    }
    // A snapshot going out a part at a time sends its changes just before its end. Otherwise the next flush sends
    // them, or, for a table not replicated, the position the cache moved to (a frame with no changes).
    if (!this.snapshotting) this.flushing ??= setImmediate(() => this.flush());
  }

  /** The edge applied this replication's frames up to `seq`. */
  acknowledged(rep: number, seq: number): void {
    if (rep !== this.rep) return;
    while (this.unacked.length > 0 && this.unacked[0] <= seq) this.unacked.shift();
    const resume = this.resume;
    if (resume !== undefined && this.window !== undefined && this.unacked.length < this.window) {
      this.resume = undefined;
      resume();
    }
  }

  resynced(): void {
    if (!this.stopped) this.snapshot();
  }

  closed(): void {
    this.stop('the trade platform is no longer served');
  }

  stop(reason?: string): void {
    if (this.stopped) return;
    this.stopped = true;
    if (reason !== undefined) this.send({ rep: this.rep, seq: this.seq++, stop: reason });
    this.unlisten?.();
    this.cancelPending();
    this.onStop();
  }

  /** Forgets pending changes, the next flush and a snapshot's wait (for the link's buffer or an acknowledgement). */
  private cancelPending(): void {
    this.dirty.clear();
    if (this.flushing !== undefined) clearImmediate(this.flushing);
    this.flushing = undefined;
    if (this.pausing !== undefined) clearTimeout(this.pausing);
    this.pausing = undefined;
    this.resume = undefined;
  }

  /**
   * The whole of every replicated table that fits, as `begin`, `rows` frames and `end`. A large snapshot goes out a
   * part at a time: while the link buffers more than `SNAPSHOT_PAUSE_BYTES` it waits, and the changes made meanwhile
   * are sent (their rows' latest text) in one `changes` frame just before `end`, so the replica is whole and current
   * at the position `end` names.
   */
  private snapshot(): void {
    if (this.congested()) return;
    this.snapshotSent = true;
    this.snapshotting = true;
    const run = ++this.snapshots;
    // Pending changes are in the snapshot; an earlier snapshot still going out is replaced.
    this.cancelPending();
    this.unacked = [];
    const tables: string[] = [];
    for (const name of REPLICATED_TABLES[this.feed.family]) {
      const table = this.cache.table(name);
      if (table && table.size <= this.maxRows && this.declared(name)) tables.push(name);
    }
    this.replicated.clear();
    for (const t of tables) this.replicated.add(t);
    this.send({ rep: this.rep, seq: this.seq++, begin: { tables } });
    const parts = tables.map((name) => ({ name, keys: [...this.cache.table(name)!.keys()], at: 0 }));
    const go = () => {
      this.pausing = undefined;
      if (this.stopped || run !== this.snapshots) return;
      while (parts.length > 0) {
        const part = parts[0];
        const table = this.cache.table(part.name);
        if (!table || !this.replicated.has(part.name)) {
          parts.shift();
          continue;
        }
        const rows: Array<[ReplicaKey, string]> = [];
        while (part.at < part.keys.length && rows.length < REPLICA_CHUNK_ROWS) {
          const key = part.keys[part.at++];
          if (typeof key === 'bigint') {
            // A key JSON cannot carry: the table is not replicated (its rows sent so far are dropped with it).
            this.dropTable(part.name, rows);
            break;
          }
          const json = table.json(key);
          if (json !== undefined) rows.push([key, json]);
        }
        if (rows.length && this.replicated.has(part.name)) {
          if (this.window !== undefined) this.unacked.push(this.seq);
          this.send({ rep: this.rep, seq: this.seq++, table: part.name, rows });
        }
        if (part.at >= part.keys.length || !this.replicated.has(part.name)) parts.shift();
        if (parts.length === 0) break;
        if (this.window !== undefined && this.unacked.length >= this.window) {
          // The edge has as many rows frames as it may hold unapplied: the next goes once it acknowledges one.
          this.resume = go;
          return;
        }
        if (this.sink.bufferedAmount > SNAPSHOT_PAUSE_BYTES) {
          this.pausing = setTimeout(go, SNAPSHOT_PAUSE_MS);
          return;
        }
      }
      this.snapshotting = false;
      const changes = this.pendingChanges();
      if (changes.length) this.send({ rep: this.rep, seq: this.seq++, changes });
      this.send({ rep: this.rep, seq: this.seq++, end: true, ...this.position() });
    };
    go();
  }

  /** The latest text of every row changed since the last frame, of the tables still replicated. */
  private pendingChanges(): Array<[string, ReplicaKey, string | null]> {
    const changes: Array<[string, ReplicaKey, string | null]> = [];
    for (const [name, keys] of this.dirty) {
      const table = this.cache.table(name);
      if (!this.replicated.has(name) || !table) continue;
      for (const key of keys) if (typeof key !== 'bigint') changes.push([name, key, table.json(key) ?? null]);
    }
    this.dirty = new Map();
    return changes;
  }

  private flush(): void {
    this.flushing = undefined;
    if (this.stopped || this.congested()) return;
    const changes: Array<[string, ReplicaKey, string | null]> = [];
    for (const [name, keys] of this.dirty) {
      if (!this.replicated.has(name)) continue;
      const table = this.cache.table(name);
      if (!table || table.size > this.maxRows) {
        this.replicated.delete(name);
        if (changes.length) this.send({ rep: this.rep, seq: this.seq++, changes: changes.splice(0) });
        this.send({ rep: this.rep, seq: this.seq++, drop: name });
        continue;
      }
      for (const key of keys) {
        if (typeof key === 'bigint') {
          this.dropTable(name, changes);
          break;
        }
        changes.push([name, key, table.json(key) ?? null]);
      }
    }
    this.dirty = new Map();
    const at = this.position();
    if (changes.length || at.pos !== this.sentPos) this.send({ rep: this.rep, seq: this.seq++, changes, ...at });
  }

  /** Takes a table out of the replica; `pending` rows of it not yet sent are forgotten, other pending ones sent first. */
  private dropTable(
    name: string,
    pending: Array<[ReplicaKey, string]> | Array<[string, ReplicaKey, string | null]>,
  ): void {
    this.replicated.delete(name);
    if (pending.length && typeof pending[0][0] === 'string' && pending[0].length === 3) {
      const others = (pending as Array<[string, ReplicaKey, string | null]>).filter((c) => c[0] !== name);
      if (others.length) this.send({ rep: this.rep, seq: this.seq++, changes: others });
    }
    pending.length = 0;
    this.send({ rep: this.rep, seq: this.seq++, drop: name });
  }

  /** The feed's position as a frame's `pos`: what the replica reflects once it applied the frame. */
  private position(): { pos?: string } {
    const pos = this.feed.positionText();
    return pos !== undefined ? { pos } : {};
  }

  private congested(): boolean {
    if (this.sink.bufferedAmount <= MAX_BUFFERED_BYTES) return false;
    this.stop('the edge link is not keeping up with the change stream');
    return true;
  }

  private send(frame: ReplicaFrame): void {
    if ('pos' in frame && frame.pos !== undefined) this.sentPos = frame.pos;
    this.sink.send(JSON.stringify(frame));
  }
}
