/**
 * How the broker answers an operation, declared on its catalog entry and carried out by one generic interpreter
 * (`broker/handlers/interpreter.ts`). The kinds cover what most operations are: a cached record by key, a cached list
 * (whole, through an index, filtered, or paged by the entry's key), a live command passthrough, a live list paged by
 * the entry's key, a Type 1 full replace (read live, overlay the DTO, write back) and a Type 2 merge patch (RFC 7386;
 * PF4 servers have no patch command, so read, merge, write). An operation with logic of its own is `custom` and gets
 * a hand-written handler bound to its entry.
 *
 * Everything here is data plus small pure functions of the call's typed arguments: no I/O, so the edge can import
 * the catalog too.
 */

/** Builds a manager command's arguments from the call's validated arguments. */
export type ManagerArgs<A> = (args: A) => Record<string, unknown> | undefined;

export interface LiveCommand<A> {
  /** The manager protocol command. */
  command: string;
  /** Its arguments; by default the call's arguments with the body, if any, under `record`. */
  args?: ManagerArgs<A>;
}

export interface CachedRecord<A> {
  kind: 'cachedRecord';
  /** The pumping-cache table. */
  table: string;
  /** The argument holding the record's key. */
  key: keyof A & string;
  /** Names the key in the not-found message: `<what> <key> not found`. */
  what: string;
  /** Further tables looked in, in order, when `table` has no row (open trades, then recently closed ones). */
  orIn?: readonly string[];
  /** Answer this member of the row rather than the row (a group's security entries, a symbol's sessions). */
  field?: string;
}

export interface CachedList<A> {
  kind: 'cachedList';
  table: string;
  /** Read through a secondary index of the table: the rows whose `index` value equals the argument `arg`. */
  index?: { name: string; arg: keyof A & string };
  /** Keeps the rows this returns true for. */
  where?: (row: Record<string, unknown>, args: A) => boolean;
}

export interface Live<A> extends LiveCommand<A> {
  kind: 'live';
  /** The command reads one record by its key: PF4's `InvalidData` then means not found. */
  keyedRead?: boolean;
  /**
   * What the caller is answered, from the server's answer (before it is shaped as the entry's response): for rules
   * the gateway keeps whatever the server sends (only non-zero differences, only rows at or after `from`, ascending).
   */
  result?: (answer: unknown, args: A) => unknown;
}

export interface LivePage<A> extends LiveCommand<A> {
  kind: 'livePage';
  /** The command pages itself (`{after, limit}` → `{items, hasMore}`); otherwise the whole list is read and paged here. */
  native?: boolean;
}

export interface WriteBack<A> {
  command: string;
  /** The write's arguments from the call's and the merged record; default: the call's arguments without the body, plus `record`. */
  args?: (args: A, record: Record<string, unknown>) => Record<string, unknown>;
}

export interface Replace<A> {
  kind: 'replace';
  /** Reads the current record live. */
  read: LiveCommand<A>;
  write: WriteBack<A>;
  /** Contract schema of the DTO: only its fields are overlaid and written. */
  dto: string;
}

export interface Patch<A> {
  kind: 'patch';
  /** PF4: read, merge, write. PF5 servers patch natively: then `native` names the command taking `patch`. */
  read?: LiveCommand<A>;
  write?: WriteBack<A>;
  /** Contract schema of what is written back (PF4: the update DTO). */
  dto?: string;
  native?: LiveCommand<A>;
}

export interface Custom {
  kind: 'custom';
}

export type Answer<A> = CachedRecord<A> | CachedList<A> | Live<A> | LivePage<A> | Replace<A> | Patch<A> | Custom;

export type AnswerKind = Answer<unknown>['kind'];
