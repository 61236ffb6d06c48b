/**
 * The generic interpreter of catalog answers: one handler per answer kind, built from the entry's declaration, so
 * that most operations need no code of their own. Every answer leaves here as the contract has it: cached rows were
 * shaped when they arrived, live answers are shaped here by the entry's response record.
 *
 * Paging follows the entry's declared key: cached tables page by their own key (checked to be the declared one when
 * the handler is built), live lists either page natively (`{after, limit}`) or are read whole, sorted by the declared
 * key (a field or a tuple of fields) and sliced after the cursor.
 */
import type {
  Answer,
  CachedList,
  CachedRecord,
  Live,
  LiveCommand,
  LivePage,
  Patch,
  Replace,
} from '../../shared/catalog/answer.js';
import type { Operation } from '../../shared/catalog/operation.js';
import { OperationError } from '../../shared/errors.js';
import { mergePatch } from '../../shared/records/mergePatch.js';
import { shapeRecord } from '../../shared/records/shape.js';
import { openapiComponents } from '../../shared/records/contract.js';
import { KINDS } from '../cache/pumpCache.js';
import { recordJson } from '../cache/recordJson.js';
import type { CacheKey } from '../cache/keyedTable.js';
import { notFound } from '../session/managerErrors.js';
import { fromCache, type Handler, type HandlerContext } from './handler.js';
import { BAD_CURSOR, compareTupleKeys, isIntegerKey, pageOf, pageRequest, pagingMeta } from './paging.js';
import { valueText } from '../../shared/valueText.js';

type Row = Record<string, unknown>;
type Args = Record<string, unknown>;

/** The handler an entry's answer declares, or undefined for `custom` answers (bound by hand). */
export function interpret(entry: Operation): Handler | undefined {
  const answer = entry.answer as Answer<Args> | undefined;
  if (!answer) return undefined;
  switch (answer.kind) {
    case 'cachedRecord':
      return cachedRecord(entry, answer);
    case 'cachedList':
      return cachedList(entry, answer);
    case 'live':
      return live(entry, answer);
    case 'livePage':
      return livePage(entry, answer);
    case 'replace':
      return replace(entry, answer);
    case 'patch':
      return patch(entry, answer);
    case 'custom':
      return undefined;
  }
}

/** The manager arguments of a live command: declared, or the call's arguments with the body under `record`. */
export function commandArgs(command: LiveCommand<Args>, args: Args): Args | undefined {
  if (command.args) return command.args(args);
  const { body, ...rest } = args;
  return body === undefined ? rest : { ...rest, record: body };
}

/** Shapes a live answer as the entry's response record, when the response is a contract record. */
export function responseShaper(entry: Operation): (value: unknown) => unknown {
  return typeof entry.response === 'string' ? shapeRecord(entry.response) : (v) => v;
}

function familyOf(entry: Operation) {
  if (!entry.family) throw new Error(`${entry.id}: a cached answer needs a family`);
  return entry.family;
}

function cachedRecord(entry: Operation, answer: CachedRecord<Args>): Handler<Args> {
  const family = familyOf(entry);
  const tables = [answer.table, ...(answer.orIn ?? [])];
  for (const t of tables) if (!KINDS[family][t]) throw new Error(`${entry.id}: no cached table ${t} on ${family}`);
  const { field } = answer;
  return (ctx) => {
    const key = ctx.args[answer.key] as CacheKey;
    return fromCache(ctx, () => {
      if (field === undefined) {
        // The row's text as the table keeps it: nothing parsed or serialised.
        for (const name of tables) {
          const json = ctx.platform.cache.table(name)?.json(key);
          if (json !== undefined) return { json };
        }
        throw notFound(family, `${answer.what} ${key} not found`);
      }
      let row: Row | undefined;
      for (let i = 0; !row && i < tables.length; i++) row = ctx.platform.cache.get(tables[i], key);
      if (!row) throw notFound(family, `${answer.what} ${key} not found`);
      const member = row[field];
      // Rows are shaped when they arrive, so a member that is an object or array serializes once per row version.
      return member !== null && typeof member === 'object' ? { json: recordJson(member) } : { data: member ?? null };
    });
  };
}

function cachedList(entry: Operation, answer: CachedList<Args>): Handler<Args> {
  const family = familyOf(entry);
  const spec = KINDS[family][answer.table];
  if (!spec) throw new Error(`${entry.id}: no cached table ${answer.table} on ${family}`);
  if (entry.paged && (Array.isArray(entry.paged.key) || entry.paged.key !== spec.key)) {
    throw new Error(
      `${entry.id}: pages by ${String(entry.paged.key)} but the ${answer.table} table is keyed by ${spec.key}`,
    );
  }
  const keyField = spec.key;
  return (ctx) => {
    const page = entry.paged ? pageRequest(ctx.args, isCacheKey) : undefined;
    return fromCache(ctx, () => {
      const table = ctx.platform.cache.table(answer.table)!;
      // A cursor's key has the type of the table's keys: a text key on a ticket-keyed table is a tampered cursor.
      if (page?.after !== undefined && table.size > 0 && typeof page.after !== typeof table.keys().next().value) {
        throw new OperationError('Validation', BAD_CURSOR);
      }
      // Rows as views: a packed table's filters read its kept fields, and the answer is the rows' stored text.
      const keep = answer.where ? (row: Row) => answer.where!(row, ctx.args) : undefined;
      const texts = (rows: readonly Row[]) => table.rowTexts(rows);
      if (answer.index) {
        let rows = table.lookupViews(answer.index.name, ctx.args[answer.index.arg] as CacheKey);
        if (keep) rows = rows.filter(keep);
        if (!page) return { rows: texts(rows) };
        const r = pageOf(rows, (row) => row[keyField] as CacheKey, page);
        return { rows: texts(r.items), paging: r.paging };
      }
      if (!keep) {
        const all = table.pageViews(page?.after, page?.limit);
        return page
          ? { rows: texts(all.items), paging: pagingMeta(all.hasMore, all.lastKey) }
          : { rows: texts(all.items) };
      }
      // A filter without an index walks the table in key order from the cursor, stopping once the page is full.
      const items: Row[] = [];
      let after = page?.after;
      const chunk = 512;
      for (;;) {
        const part = table.pageViews(after, chunk);
        for (const row of part.items) {
          if (!keep(row)) continue;
          if (page?.limit !== undefined && items.length === page.limit) {
            return { rows: texts(items), paging: pagingMeta(true, items[items.length - 1][keyField]) };
          }
          items.push(row);
        }
        if (!part.hasMore) break;
        after = part.lastKey;
      }
      return page ? { rows: texts(items), paging: pagingMeta(false, undefined) } : { rows: texts(items) };
    });
  };
}

const isCacheKey = (v: unknown): v is CacheKey => isIntegerKey(v) || typeof v === 'string';

function live(entry: Operation, answer: Live<Args>): Handler<Args> {
  const shape = responseShaper(entry);
  return async (ctx) => {
    const result = await ctx.platform.session.request(answer.command, commandArgs(answer, ctx.args), ctx.deadline, {
      keyedRead: answer.keyedRead,
    });
    return { data: shape(answer.result ? answer.result(result, ctx.args) : result) };
  };
}

function livePage(entry: Operation, answer: LivePage<Args>): Handler<Args> {
  if (!entry.paged) throw new Error(`${entry.id}: a live page needs the entry's paging key`);
  const fields = typeof entry.paged.key === 'string' ? [entry.paged.key] : [...entry.paged.key];
  const itemShape = shapeRecord(valueText(entry.response).replace(/\[\]$/, ''));
  const keyOf = (row: Row) => (fields.length === 1 ? row[fields[0]] : fields.map((f) => row[f])) as PageKey;
  if (answer.native && fields.length !== 1) throw new Error(`${entry.id}: a native page is keyed by one field`);
  return async (ctx) => {
    const args = commandArgs(answer, ctx.args) ?? {};
    delete args.limit;
    delete args.cursor;
    if (answer.native) {
      const page = pageRequest(ctx.args, isIntegerKey);
      if (page.after !== undefined) args.after = page.after;
      if (page.limit !== undefined) args.limit = page.limit + 1;
      const got = (await ctx.platform.session.request(answer.command, args, ctx.deadline)) as {
        items?: unknown[];
        hasMore?: boolean;
      };
      let items = (got?.items ?? []).map(itemShape) as Row[];
      let hasMore = got?.hasMore === true;
      if (page.limit !== undefined && items.length > page.limit) {
        items = items.slice(0, page.limit);
        hasMore = true;
      }
      return { data: items, paging: pagingMeta(hasMore, items.length ? keyOf(items[items.length - 1]) : undefined) };
    }
    // Read whole and paged here. The key need not be unique nor complete (two firewall rules for one range, a holiday
    // without a symbol), so rows sort by the key's fields (null first) and then by their place in the server's list.
    // The cursor is the last row's key as the spec describes it (a group name) while the list's keys are unique and
    // complete; otherwise it adds the row's server position, so no row is skipped or repeated at a page boundary.
    const arity = fields.length;
    const page = pageRequest(ctx.args, isListCursor(arity));
    const got = await ctx.platform.session.request(answer.command, args, ctx.deadline);
    const rows = (Array.isArray(got) ? got : []).map((item, pos) => {
      const row = itemShape(item) as Row;
      return { row, parts: fields.map((f) => keyPart(row[f])), pos };
    });
    rows.sort((a, b) => compareTupleKeys(a.parts, b.parts) || a.pos - b.pos);
    const first = rows[0]?.parts;
    if (page.after !== undefined && first) {
      // Each field of the cursor has the type of that field in the list (or is null): anything else was tampered with.
      const fieldsOfCursor = Array.isArray(page.after) ? page.after : [page.after];
      if (
        fieldsOfCursor.slice(0, arity).some((v, i) => v !== null && first[i] !== null && typeof v !== typeof first[i])
      ) {
        throw new OperationError('Validation', BAD_CURSOR);
      }
    }
    const unique = rows.every(
      (r, i) => !r.parts.includes(null) && (i === 0 || compareTupleKeys(r.parts, rows[i - 1].parts) !== 0),
    );
    const cursorOf = (e: (typeof rows)[number]): ListCursor =>
      unique ? (arity === 1 ? e.parts[0]! : e.parts) : [...e.parts, e.pos];
    const r = pageOf(rows, cursorOf, page, (a, b) => compareListCursors(a, b, arity));
    return { data: r.items.map((e) => e.row), paging: r.paging };
  };
}

type PageKey = CacheKey | CacheKey[];
/** A key field, or the key's fields, or the key's fields and the row's server position. */
type ListCursor = CacheKey | Array<CacheKey | null>;

/** A key field as the sort sees it: numbers and text as they are, anything else (null, absent) as null. */
const keyPart = (value: unknown): CacheKey | null =>
  typeof value === 'number' || typeof value === 'bigint' || typeof value === 'string' ? value : null;

function isListCursor(arity: number) {
  return (v: unknown): v is ListCursor => {
    if (arity === 1 && isCacheKey(v)) return true;
    if (!Array.isArray(v) || (v.length !== arity && v.length !== arity + 1)) return false;
    if (!v.slice(0, arity).every((p) => p === null || isCacheKey(p))) return false;
    return v.length === arity || (isIntegerKey(v[arity]) && v[arity] >= 0);
  };
}

/** Orders cursors by the key's fields, then by server position when both carry one (a key-only cursor equals its rows). */
function compareListCursors(a: ListCursor, b: ListCursor, arity: number): number {
  const ta = Array.isArray(a) ? a : [a];
  const tb = Array.isArray(b) ? b : [b];
  const c = compareTupleKeys(ta.slice(0, arity), tb.slice(0, arity));
  if (c !== 0 || ta.length <= arity || tb.length <= arity) return c;
  return (ta[arity] as number) - (tb[arity] as number);
}

/** Fields of a contract record. */
function fieldsOf(schema: string): string[] {
  const s = (openapiComponents as Record<string, { properties?: Record<string, unknown> }>)[schema];
  if (!s?.properties) throw new Error(`no contract record ${schema}`);
  return Object.keys(s.properties);
}

function pick(record: Row, fields: readonly string[]): Row {
  const out: Row = {};
  for (const f of fields) if (record[f] !== undefined) out[f] = record[f];
  return out;
}

/** The call's arguments without its body (a replace or patch sends the record on its own). */
function withoutBody(args: Args): Args {
  const { body: _body, ...rest } = args;
  return rest;
}

function writeArgs(write: Replace<Args>['write'], args: Args, record: Row): Args {
  if (write.args) return write.args(args, record);
  return { ...withoutBody(args), record };
}

/**
 * The current record of a write, read live: with the read's declared arguments, else the call's arguments without its
 * body (the record to write is no argument of the read).
 */
async function readCurrent(ctx: HandlerContext<Args>, read: LiveCommand<Args>): Promise<Row> {
  const args = read.args ? read.args(ctx.args) : withoutBody(ctx.args);
  const current = await ctx.platform.session.request(read.command, args, ctx.deadline, { keyedRead: true });
  const record: unknown = Array.isArray(current) ? current[0] : current;
  if (!record || typeof record !== 'object') throw notFound(ctx.platform.family, 'record not found');
  return record as Row;
}

/** Type 1: the current record read live, the DTO's supplied fields laid over it, the DTO's fields written back. */
function replace(entry: Operation, answer: Replace<Args>): Handler<Args> {
  const fields = fieldsOf(answer.dto);
  const shape = responseShaper(entry);
  return async (ctx) => {
    const current = await readCurrent(ctx, answer.read);
    const dto = (ctx.args.body ?? {}) as Row;
    const merged = pick({ ...current, ...pick(dto, fields) }, fields);
    const result = await ctx.platform.session.request(
      answer.write.command,
      writeArgs(answer.write, ctx.args, merged),
      ctx.deadline,
    );
    return { data: shape(result) };
  };
}

/**
 * Type 2: RFC 7386 merge patch. PF5 servers take the patch natively; for PF4 the current record is read, the patch
 * merged over its DTO fields (a null member empties a text or number field: a fixed-shape record cannot lose one) and
 * the result written back.
 */
function patch(entry: Operation, answer: Patch<Args>): Handler<Args> {
  const shape = responseShaper(entry);
  if (answer.native) {
    const native = answer.native;
    return async (ctx) => ({
      data: shape(await ctx.platform.session.request(native.command, commandArgs(native, ctx.args), ctx.deadline)),
    });
  }
  if (!answer.read || !answer.write || !answer.dto)
    throw new Error(`${entry.id}: a read-merge-write patch needs read, write and dto`);
  const { read, write } = answer;
  const fields = fieldsOf(answer.dto);
  // The DTO's empty record: the type of a field the server's record lacks, so that null empties it by its type too.
  const emptyDto = shapeRecord(answer.dto)({}) as Row;
  return async (ctx) => {
    const current = pick(await readCurrent(ctx, read), fields);
    const body = ctx.args.body as Row;
    const unknown = Object.keys(body).filter((f) => !fields.includes(f));
    if (unknown.length) throw new OperationError('Validation', `body.${unknown[0]}: cannot be changed by this patch`);
    const merged = mergePatch(current, body, (path) => {
      const was = current[path] ?? emptyDto[path];
      return typeof was === 'number' ? 0 : typeof was === 'boolean' ? false : '';
    });
    const result = await ctx.platform.session.request(
      write.command,
      writeArgs(write, ctx.args, pick(merged, fields)),
      ctx.deadline,
    );
    return { data: shape(result) };
  };
}
