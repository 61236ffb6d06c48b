/**
 * The snapshot as a broker reads it, and the cache a broker builds from it: `readSnapshot` takes the frames after a
 * login answer up to `resync end` and notes every departure from the documented shape (begin, chunks, end; chunk
 * kinds declared and in the family's order; `end.counts` equal to the items received; every item keyed), and
 * `Cache` applies the snapshot and then the change events in arrival order (put by key for add and update, remove
 * by key for delete; a PF4 trade in a closed state leaves; a symbol leaving takes its summary, a news topic its body).
 *
 * Invariant: a cache only ever moves forward through its connection's frames (`catchUp`), so comparing it after a
 * fenced Ping compares the state as of that Ping.
 */
import type { ChangeKind, Family, ManagerEvent } from '../../shared/protocol.js';
import { isEventFrame, show, type ProbeConnection, type Received } from './connection.js';
import { KEY_FIELDS, SNAPSHOT_KINDS } from './families.js';
import { valueText } from '../../shared/valueText.js';

export type Row = Record<string, unknown>;

/** A key as the cache indexes it: numbers and bigints by their digits, strings as they are. */
export function keyOf(value: unknown): string {
  return typeof value === 'bigint' || typeof value === 'number' ? String(value) : JSON.stringify(value);
}

export interface SnapshotReading {
  /** The seq of the frame after which the snapshot was read (the login answer's). */
  startSeq: number;
  /** The seq of the last frame read: the `end` frame's. */
  endSeq: number;
  begin?: Row;
  /** Items by kind, in arrival order. */
  items: Map<string, unknown[]>;
  /** Chunk kinds in arrival order, one entry per chunk. */
  chunkKinds: string[];
  counts?: Record<string, unknown>;
  /** Departures from the frame order: begin first, chunks, end. */
  orderProblems: string[];
  /** Chunk kinds that are undeclared, unknown to the family, or out of the documented order. */
  kindProblems: string[];
  /** `end.counts` against the items received. */
  countProblems: string[];
  /** Items that are not objects or lack their key field, and keys repeated within a kind. */
  keyProblems: string[];
  /** Change events that came between begin and end (allowed; the broker applies them to the tables being built). */
  eventsDuring: number;
}

/**
 * Reads a snapshot from the frames of `connection` after `afterSeq` (the login answer's seq), waiting up to
 * `timeoutMs` for `end`. Throws when no `end` comes in time or the connection closes first.
 */
export async function readSnapshot(
  connection: ProbeConnection,
  afterSeq: number,
  family: Family,
  declared: readonly string[],
  timeoutMs: number,
): Promise<SnapshotReading> {
  const isEnd = (f: Received) =>
    isEventFrame(f.value) && (f.value as ManagerEvent).event === 'resync' && (f.value as ManagerEvent).op === 'end';
  await connection.waitFor(
    () => connection.closed || connection.frames.slice(afterSeq).some(isEnd),
    timeoutMs,
    'snapshot end',
  );
  const endFrame = connection.frames.slice(afterSeq).find(isEnd);
  if (!endFrame) throw new Error(`the connection closed (code ${connection.closeCode}) before the snapshot's end`);
  return analyseSnapshot(connection.frames.slice(afterSeq, endFrame.seq), family, declared);
}

/** The snapshot in `frames` (begin to end): what it holds and every departure from the documented shape. */
export function analyseSnapshot(
  frames: readonly Received[],
  family: Family,
  declared: readonly string[],
): SnapshotReading {
  const reading: SnapshotReading = {
    startSeq: (frames[0]?.seq ?? 1) - 1,
    endSeq: frames.at(-1)?.seq ?? 0,
    items: new Map(),
    chunkKinds: [],
    orderProblems: [],
    kindProblems: [],
    countProblems: [],
    keyProblems: [],
    eventsDuring: 0,
  };
  const order = SNAPSHOT_KINDS[family];
  let phase: 'before' | 'chunks' | 'ended' = 'before';
  let lastRank = -1;
  for (const frame of frames) {
    if (!isEventFrame(frame.value)) continue;
    const event = frame.value as ManagerEvent;
    if (event.event !== 'resync') {
      if (phase === 'before')
        reading.orderProblems.push(`a ${String(event.event)} ${String(event.op)} event came before resync begin`);
      else reading.eventsDuring++;
      continue;
    }
    const record = event.record as Row | null;
    if (event.op === 'begin') {
      if (phase !== 'before') reading.orderProblems.push('a second resync begin before end');
      reading.begin = record ?? undefined;
      phase = 'chunks';
    } else if (event.op === 'chunk') {
      if (phase === 'before') reading.orderProblems.push('a resync chunk before begin');
      const kind = String(record?.kind);
      const items = record?.items;
      if (!Array.isArray(items)) {
        reading.orderProblems.push(`a ${kind} chunk whose items are ${show(items, 40)}, not an array`);
        continue;
      }
      reading.chunkKinds.push(kind);
      const rank = order.indexOf(kind as ChangeKind);
      if (!declared.includes(kind))
        reading.kindProblems.push(`a ${kind} chunk, a kind the login did not declare among its events`);
      if (rank < 0) reading.kindProblems.push(`a ${kind} chunk: ${family} snapshots carry ${order.join(', ')}`);
      else if (rank < lastRank)
        reading.kindProblems.push(
          `a ${kind} chunk after ${order[lastRank]}: the documented order is ${order.join(', ')}`,
        );
      lastRank = Math.max(lastRank, rank);
      reading.items.set(kind, [...(reading.items.get(kind) ?? []), ...(items as unknown[])]);
    } else if (event.op === 'end') {
      if (phase === 'before') reading.orderProblems.push('resync end before begin');
      reading.counts = (record?.counts ?? undefined) as Record<string, unknown> | undefined;
      phase = 'ended';
    } else {
      reading.orderProblems.push(`a resync event with op ${show(event.op, 40)}`);
    }
  }
  checkCounts(reading);
  checkKeys(reading, family);
  return reading;
}

function checkCounts(reading: SnapshotReading): void {
  const counts = reading.counts;
  if (typeof counts !== 'object' || counts === null) {
    reading.countProblems.push(`end.counts is ${show(counts, 60)}, not an object`);
    return;
  }
  for (const [kind, items] of reading.items) {
    if (counts[kind] !== items.length)
      reading.countProblems.push(`${kind}: end.counts says ${show(counts[kind], 30)}, ${items.length} items came`);
  }
  for (const [kind, count] of Object.entries(counts)) {
    if (!reading.items.has(kind) && count !== 0)
      reading.countProblems.push(`${kind}: end.counts says ${show(count, 30)}, no chunk came`);
  }
}

function checkKeys(reading: SnapshotReading, family: Family): void {
  for (const [kind, items] of reading.items) {
    const key = KEY_FIELDS[family][kind as ChangeKind];
    if (!key) continue;
    const seen = new Set<string>();
    for (const item of items) {
      if (typeof item !== 'object' || item === null || Array.isArray(item)) {
        reading.keyProblems.push(`a ${kind} item that is not an object: ${show(item, 60)}`);
        continue;
      }
      const value = (item as Row)[key];
      if (value === undefined || value === null) {
        reading.keyProblems.push(`a ${kind} item without its key ${key}: ${show(item, 80)}`);
        continue;
      }
      const k = keyOf(value);
      if (seen.has(k)) reading.keyProblems.push(`${kind} ${key} ${k} twice`);
      seen.add(k);
    }
  }
}

/** PF4 trade states that mean the trade left the open trades. */
const CLOSED_STATE = /^(Closed|Deleted)/;

/**
 * A broker's cache of one session: the snapshot's tables, then every change event applied in arrival order. Kinds a
 * snapshot does not carry (mail, news bodies, PF5 margin calls) are not kept.
 */
export class Cache {
  readonly tables = new Map<string, Map<string, Row>>();
  private cursor: number;

  /** Replays the snapshot's frames as the broker does: chunks fill the tables, an event between begin and end is
   *  applied to them (a later chunk's row of the same key overwrites it); the events after end follow by catchUp. */
  constructor(
    private readonly connection: Pick<ProbeConnection, 'frames'>,
    readonly family: Family,
    snapshot: SnapshotReading,
  ) {
    for (const kind of SNAPSHOT_KINDS[family]) this.tables.set(kind, new Map());
    const key = KEY_FIELDS[family];
    for (const frame of connection.frames.slice(snapshot.startSeq, snapshot.endSeq)) {
      if (!isEventFrame(frame.value)) continue;
      const event = frame.value as ManagerEvent;
      if (event.event !== 'resync') {
        this.apply(event);
        continue;
      }
      const record = event.record as Row | null;
      if (event.op !== 'chunk' || !Array.isArray(record?.items)) continue;
      const table = this.tables.get(String(record.kind));
      const field = key[String(record.kind) as ChangeKind];
      if (!table || !field) continue;
      for (const item of record.items as unknown[]) {
        if (typeof item === 'object' && item !== null && (item as Row)[field] !== undefined)
          table.set(keyOf((item as Row)[field]), item as Row);
      }
    }
    this.cursor = snapshot.endSeq;
  }

  table(kind: string): Map<string, Row> {
    return this.tables.get(kind) ?? new Map<string, Row>();
  }

  /** Applies the events received since the last call. */
  catchUp(): void {
    const frames = this.connection.frames;
    for (; this.cursor < frames.length; this.cursor++) {
      const value = frames[this.cursor].value;
      if (isEventFrame(value)) this.apply(value as ManagerEvent);
    }
  }

  private apply(event: ManagerEvent): void {
    const kind = event.event;
    const table = this.tables.get(kind);
    const field = KEY_FIELDS[this.family][kind as ChangeKind];
    const record = event.record as Row | null;
    if (!table || !field || typeof record !== 'object' || record === null || record[field] === undefined) return;
    const key = keyOf(record[field]);
    const closedTrade =
      this.family === 'PF4' && kind === 'trades' && CLOSED_STATE.test(valueText(record.tradeRecordState ?? ''));
    if (event.op === 'delete' || (event.op === 'update' && closedTrade)) {
      table.delete(key);
      if (kind === 'symbols') this.tables.get('symbolInfo')?.delete(key);
    } else if (event.op === 'add' || event.op === 'update') {
      table.set(key, record);
    }
  }
}
