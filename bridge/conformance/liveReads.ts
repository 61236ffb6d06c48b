/**
 * Live reads of what a snapshot carries, and the comparison of a cache with them. For each kind, the commands that
 * read the same records live, in preference order (the first the server declares is used): a whole list, a list
 * paged `{after, limit}` → `{items, hasMore}` by the kind's key, or one read per key (PF4 symbol sessions and
 * summaries, whose keys come from the cache). Kinds without a declared live read are left out of the comparison.
 *
 * A comparison is fenced: a Ping answered before the read and another after it, and the kind's events between the
 * two counted. Only a read with no such event in between is compared (the cache then holds exactly the state the read
 * saw, by the Ping ordering rule); a busy kind is read again, up to a bound, and reported as never quiet otherwise.
 * Every field of the live record must equal the cached one but the family's volatile fields; a cached record the
 * live read lacks is stale, a live record the cache lacks is lost.
 */
import type { ChangeKind, Family } from '../../shared/protocol.js';
import { show, type Answer, type ProbeConnection } from './connection.js';
import { KEY_FIELDS, SNAPSHOT_KINDS, UNCOMPARED_KINDS, VOLATILE_FIELDS } from './families.js';
import { keyOf, type Cache, type Row } from './snapshot.js';

type ReadShape =
  | { shape: 'list'; command: string; args?: Record<string, unknown> }
  | { shape: 'paged'; command: string; args?: Record<string, unknown> }
  /** One command per key, keys from the cache's `keysFrom` table; the answer is the record, or its `field`. */
  | { shape: 'perKey'; command: string; keysFrom: ChangeKind; arg: string; field?: string }
  /** A list whose position is the key (`pos`). */
  | { shape: 'positional'; command: string };

const LIVE_READS: Record<Family, Partial<Record<ChangeKind, readonly ReadShape[]>>> = {
  PF4: {
    users: [
      { shape: 'paged', command: 'UsersRequest' },
      { shape: 'list', command: 'UserRecordsRequest' },
    ],
    trades: [{ shape: 'paged', command: 'TradesRequest' }],
    symbols: [{ shape: 'list', command: 'SymbolsRequest' }],
    groups: [{ shape: 'list', command: 'GroupsRequest' }],
    margin: [{ shape: 'list', command: 'MarginsRequest' }],
    online: [{ shape: 'paged', command: 'OnlineRequest' }],
    news: [{ shape: 'list', command: 'NewsRequest' }],
    symbolGroups: [{ shape: 'positional', command: 'CfgRequestSymbolGroup' }],
    symbolSessions: [
      { shape: 'perKey', command: 'SymbolSessionsGet', keysFrom: 'symbolSessions', arg: 'symbol', field: 'days' },
    ],
    symbolInfo: [{ shape: 'perKey', command: 'SymbolInfoRequest', keysFrom: 'symbolInfo', arg: 'symbol' }],
  },
  PF5: {
    users: [{ shape: 'paged', command: 'UsersRequest' }],
    positions: [
      { shape: 'paged', command: 'PositionsRequest' },
      { shape: 'paged', command: 'PositionByGroup', args: { mask: '*' } },
    ],
    orders: [
      { shape: 'paged', command: 'OrdersRequest' },
      { shape: 'paged', command: 'OrderByGroup', args: { mask: '*' } },
    ],
    deals: [
      { shape: 'paged', command: 'DealsRequest' },
      { shape: 'paged', command: 'DealByGroup', args: { mask: '*' } },
    ],
    symbols: [{ shape: 'list', command: 'SymbolsRequest' }],
    groups: [{ shape: 'list', command: 'GroupsRequest' }],
  },
};

/** Kinds whose events also change what a kind's comparison looks at. */
const ALSO_MOVED_BY: Partial<Record<ChangeKind, readonly ChangeKind[]>> = { symbolInfo: ['symbols'] };

const PAGE = 5000;
const ATTEMPTS = 5;

export interface ReadBounds {
  answerMs: number;
  /** The step of the pause before reading a busy kind again: the n-th pause is n steps. */
  retryMs: number;
}

/** The live read the server declares for `kind`, if any. */
export function liveReadFor(family: Family, kind: ChangeKind, declared: readonly string[]): ReadShape | undefined {
  return LIVE_READS[family][kind]?.find((read) => declared.includes(read.command));
}

/** The snapshot kinds with a declared live read, in snapshot order. */
export function comparableKinds(family: Family, declared: readonly string[]): ChangeKind[] {
  return SNAPSHOT_KINDS[family].filter(
    (kind) => !UNCOMPARED_KINDS.includes(kind) && liveReadFor(family, kind, declared),
  );
}

function resultOf(answer: Answer, what: string): unknown {
  if (answer.kind === 'error') throw new Error(`${what} was refused: ${show(answer.error)}`);
  return answer.value;
}

async function fetchLive(
  connection: ProbeConnection,
  cache: Cache,
  kind: ChangeKind,
  read: ReadShape,
  bounds: ReadBounds,
): Promise<Row[]> {
  const key = KEY_FIELDS[cache.family][kind] as string;
  const ask = (command: string, args: Record<string, unknown>) =>
    connection.request(command, args, bounds.answerMs).then((a) => resultOf(a, `${command} ${show(args, 80)}`));
  switch (read.shape) {
    case 'list': {
      const value = await ask(read.command, { ...read.args });
      if (!Array.isArray(value)) throw new Error(`${read.command} answered ${show(value, 80)}, not a list`);
      return value as Row[];
    }
    case 'positional': {
      const value = await ask(read.command, {});
      if (!Array.isArray(value)) throw new Error(`${read.command} answered ${show(value, 80)}, not a list`);
      return (value as Row[]).map((entry, pos) => ({ pos, ...entry }));
    }
    case 'paged': {
      const rows: Row[] = [];
      let after: unknown;
      for (;;) {
        const page = (await ask(read.command, {
          ...read.args,
          ...(after === undefined ? {} : { after }),
          limit: PAGE,
        })) as { items?: unknown; hasMore?: unknown };
        if (
          typeof page !== 'object' ||
          page === null ||
          !Array.isArray(page.items) ||
          typeof page.hasMore !== 'boolean'
        ) {
          throw new Error(`${read.command} answered ${show(page, 80)}, not {items, hasMore}`);
        }
        rows.push(...(page.items as Row[]));
        if (!page.hasMore || page.items.length === 0) return rows;
        after = (page.items[page.items.length - 1] as Row)[key];
      }
    }
    case 'perKey': {
      const rows: Row[] = [];
      for (const row of cache.table(read.keysFrom).values()) {
        const id = row[read.arg];
        const value = await ask(read.command, { [read.arg]: id });
        rows.push(read.field ? { [key]: id, [read.field]: value } : (value as Row));
      }
      return rows;
    }
  }
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => deepEqual(x, bb[i]));
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b as object);
  return (
    ka.length === kb.length &&
    ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual((a as Row)[k], (b as Row)[k]))
  );
}

/** The differences of a cached table from live records: lost, stale and differing fields, at most `max` named. */
export function differences(
  family: Family,
  kind: ChangeKind,
  cached: Map<string, Row>,
  live: Row[],
  max = 5,
): string[] {
  const key = KEY_FIELDS[family][kind] as string;
  const volatile = new Set(VOLATILE_FIELDS[family][kind] ?? []);
  const out: string[] = [];
  const seen = new Set<string>();
  for (const record of live) {
    const k = keyOf(record?.[key]);
    seen.add(k);
    const mine = cached.get(k);
    if (!mine) {
      out.push(`${kind} ${key} ${k}: on the server, not in the cache (lost)`);
      continue;
    }
    for (const [field, value] of Object.entries(record)) {
      if (volatile.has(field) || deepEqual(value, mine[field])) continue;
      out.push(
        `${kind} ${key} ${k}: ${field} is ${show(value, 60)} on the server, ${show(mine[field], 60)} in the cache`,
      );
      break;
    }
  }
  for (const k of cached.keys())
    if (!seen.has(k)) out.push(`${kind} ${key} ${k}: in the cache, not on the server (stale)`);
  return out.length > max ? [...out.slice(0, max), `… ${out.length - max} more`] : out;
}

/** Sends a Ping and waits for its answer: every event of a change made before it has then arrived. */
export async function fence(connection: ProbeConnection, answerMs: number): Promise<void> {
  const answer = await connection.request('Ping', undefined, answerMs);
  if (answer.kind === 'error') throw new Error(`Ping was refused: ${show(answer.error)}`);
}

export interface KindComparison {
  kind: ChangeKind;
  command: string;
  rows: number;
  problems: string[];
}

/**
 * Compares the cache's `kind` with its live read in a quiet window (see the module comment). Problems are empty when
 * they agree.
 */
export async function compareKind(
  connection: ProbeConnection,
  cache: Cache,
  kind: ChangeKind,
  declared: readonly string[],
  bounds: ReadBounds,
): Promise<KindComparison> {
  const read = liveReadFor(cache.family, kind, declared);
  if (!read) throw new Error(`no declared live read for ${kind}`);
  const moving = [kind, ...(ALSO_MOVED_BY[kind] ?? [])];
  let last: string[] = [];
  let rows = 0;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    await fence(connection, bounds.answerMs);
    const from = connection.lastSeq;
    const live = await fetchLive(connection, cache, kind, read, bounds);
    await fence(connection, bounds.answerMs);
    const busy = connection.eventsAfter(from).some((e) => moving.includes(e.event as ChangeKind));
    cache.catchUp();
    rows = live.length;
    last = differences(cache.family, kind, cache.table(kind), live);
    if (last.length === 0) return { kind, command: read.command, rows, problems: [] };
    if (!busy) return { kind, command: read.command, rows, problems: last };
    if (attempt < ATTEMPTS) await new Promise((resolve) => setTimeout(resolve, bounds.retryMs * attempt));
  }
  return {
    kind,
    command: read.command,
    rows,
    problems: [`never quiet in ${ATTEMPTS} reads; the last differed:`, ...last],
  };
}

/** Compares every comparable kind; the detail of each disagreement, or the kinds and rows compared. */
export async function compareAll(
  connection: ProbeConnection,
  cache: Cache,
  declared: readonly string[],
  bounds: ReadBounds,
): Promise<{ problems: string[]; compared: string[]; left: string[] }> {
  const kinds = comparableKinds(cache.family, declared);
  const problems: string[] = [];
  const compared: string[] = [];
  for (const kind of kinds) {
    const result = await compareKind(connection, cache, kind, declared, bounds);
    compared.push(`${kind} (${result.rows}, ${result.command})`);
    problems.push(...result.problems);
  }
  const left = SNAPSHOT_KINDS[cache.family].filter((kind) => !kinds.includes(kind));
  return { problems, compared, left };
}
