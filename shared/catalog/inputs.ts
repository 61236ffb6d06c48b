/**
 * Validation of one call's path, query and body against its catalog entry, with messages that name the field path
 * and the rule (`login: login must be a positive integer`). Query arrays arrive repeated, comma-joined or both; query
 * parameters the entry does not declare are ignored.
 *
 * Text is checked here, once, for every field of every entry: after the schemas accepted the inputs, each string
 * that would reach the trading server (path and query values, body values and member names) must be well-formed
 * Unicode (no lone surrogate) and free of control characters (C0, DEL, C1), unless the entry allows them for that
 * field (`controlCharacters`). Bodies nest at most MAX_BODY_DEPTH levels, and no array in a body holds more than
 * MAX_BODY_ARRAY_ITEMS items: checked before the schema runs, whose cost grows with every wrong item.
 *
 * A refusal lists at most MAX_LISTED_PROBLEMS problems within MAX_MESSAGE_LENGTH characters and counts the rest
 * ("… and 4998 more problems"), so a large wrong body gets a short answer. Nothing here recurses over the body or
 * spreads its members into an argument list: a body of any length or depth is walked with an explicit stack.
 */
import type { z } from 'zod';
import type { ControlCharacterAllowances, Operation } from './index.js';

/** Query parameters the edge consumes itself: they are never passed to the broker as operation arguments. */
export const CONTROL_QUERY = new Set(['requestTimeout', 'confirm']);

export type Inputs = { ok: true; args: Record<string, unknown> } | { ok: false; message: string };

/**
 * The body as received: absent, parsed JSON, not JSON at all, or refused before it was parsed (not UTF-8, not read to
 * its end), with the problem that says why, naming `body`.
 */
export type RawBody =
  | { kind: 'none' }
  | { kind: 'json'; value: unknown }
  | { kind: 'malformed' }
  | { kind: 'refused'; problem: string };

export function validateInputs(
  entry: Operation,
  pathParams: Record<string, string>,
  url: Pick<URL, 'searchParams'>,
  body: RawBody,
): Inputs {
  const args: Record<string, unknown> = {};
  const problems = new Problems();

  if (entry.params) {
    const r = entry.params.safeParse(pathParams);
    if (r.success) Object.assign(args, r.data);
    else problems.addIssues(r.error);
  }
  if (entry.query) {
    const r = entry.query.safeParse(collectQuery(entry.query, url.searchParams));
    if (r.success) {
      for (const [k, v] of Object.entries(r.data)) if (!CONTROL_QUERY.has(k) && v !== undefined) args[k] = v;
    } else problems.addIssues(r.error);
  }
  if (entry.body) {
    const tooLong = body.kind === 'json' ? longArray(body.value) : null;
    if (body.kind === 'malformed') problems.add('body: must be well-formed JSON');
    else if (body.kind === 'refused') problems.add(body.problem);
    else if (tooLong !== null) problems.add(`${tooLong}: must hold at most ${MAX_BODY_ARRAY_ITEMS} items`);
    else {
      const value = body.kind === 'json' ? body.value : undefined;
      let r = entry.body.safeParse(value);
      // A field that is a double takes an integer beyond 2^53 − 1 as its nearest double, as JSON.parse would have read
      // it; only 64-bit id fields keep the exact value the lossless body parse made (a bigint).
      if (!r.success && hasBigint(value)) {
        const relaxed = doublesForBigints(value, r.error);
        if (relaxed !== value) r = entry.body.safeParse(relaxed);
      }
      if (r.success) args.body = r.data;
      else problems.addIssues(r.error, 'body');
    }
  }
  if (!problems.count) for (const problem of textProblems(args, entry.controlCharacters ?? {})) problems.add(problem);
  return problems.count ? { ok: false, message: problems.message() } : { ok: true, args };
}

/** At most this many problems are listed in a refusal; the others are counted. */
export const MAX_LISTED_PROBLEMS = 10;
/**
 * The listed problems stop before the message would pass this many characters (a first problem longer than that is
 * cut): the catalog's own longest problems, enum listings, take about 3000.
 */
export const MAX_MESSAGE_LENGTH = 4096;

/**
 * The problems of one request, in the order found: listed while there are fewer than MAX_LISTED_PROBLEMS and the
 * message stays within MAX_MESSAGE_LENGTH, then only counted.
 */
class Problems {
  private readonly listed: string[] = [];
  private length = 0;
  private full = false;
  count = 0;

  add(problem: string): void {
    this.count++;
    if (this.full) return;
    if (this.listed.length === 0) {
      this.listed.push(cut(problem, MAX_MESSAGE_LENGTH));
      this.length = this.listed[0].length;
    } else if (this.listed.length < MAX_LISTED_PROBLEMS && this.length + 2 + problem.length <= MAX_MESSAGE_LENGTH) {
      this.listed.push(problem);
      this.length += 2 + problem.length;
    } else {
      this.full = true;
    }
  }

  /** A schema's issues, each named by its field path under `prefix`; only the listed ones are formatted. */
  addIssues(error: z.ZodError, prefix?: string): void {
    const { issues } = error;
    for (let i = 0; i < issues.length; i++) {
      if (this.full || this.listed.length >= MAX_LISTED_PROBLEMS) {
        this.full = true;
        this.count += issues.length - i;
        return;
      }
      const issue = issues[i];
      const path = [...(prefix ? [prefix] : []), ...issue.path.map(String)].join('.');
      this.add(path ? `${path}: ${issue.message}` : issue.message);
    }
  }

  /** The listed problems joined with "; ", and how many more there are. */
  message(): string {
    const more = this.count - this.listed.length;
    return this.listed.join('; ') + (more > 0 ? `; … and ${more} more problem${more === 1 ? '' : 's'}` : '');
  }
}

/** The text, or its first `max` − 1 characters and "…" (never half of a surrogate pair). */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

/**
 * Whether a parsed body holds a bigint (an integer beyond 2^53 − 1), walked without recursion, one member pushed at a
 * time (spreading a long array into `push` overflows the stack).
 */
function hasBigint(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length) {
    const v = pending.pop();
    if (typeof v === 'bigint') return true;
    if (v !== null && typeof v === 'object') for (const member of Object.values(v)) pending.push(member);
  }
  return false;
}

/**
 * A copy of the body in which each bigint that a schema refused for want of a number (a double field) is that number;
 * the body itself when there is none.
 */
function doublesForBigints(body: unknown, error: z.ZodError): unknown {
  const paths = error.issues
    .filter((i) => i.code === 'invalid_type' && i.expected === 'number')
    .map((i) => i.path)
    .filter(
      (path) =>
        path.length > 0 &&
        typeof path.reduce<unknown>((at, k) => (at as Record<PropertyKey, unknown> | null | undefined)?.[k], body) ===
          'bigint',
    );
  if (!paths.length) return body;
  const copy = structuredClone(body);
  for (const path of paths) {
    const parent = path
      .slice(0, -1)
      .reduce<unknown>((at, k) => (at as Record<PropertyKey, unknown>)[k], copy) as Record<PropertyKey, unknown>;
    const last = path[path.length - 1];
    parent[last] = Number(parent[last]);
  }
  return copy;
}

/**
 * Longer arrays in a body are refused before the schema runs. Above the longest list an operation declares (100000
 * tickets or logins), so an operation's own bound answers first; it bounds the lists the contract leaves unbounded
 * (a record's `logins`, a symbol's sessions), where the schema's cost grows with every wrong item.
 */
export const MAX_BODY_ARRAY_ITEMS = 120_000;

/** The path (`body.logins`) of an array in the body longer than MAX_BODY_ARRAY_ITEMS, or null; walked without recursion. */
function longArray(value: unknown): string | null {
  const pending: Array<{ value: unknown; path: string }> = [{ value, path: 'body' }];
  while (pending.length) {
    const at = pending.pop()!;
    if (Array.isArray(at.value)) {
      if (at.value.length > MAX_BODY_ARRAY_ITEMS) return at.path;
      for (let i = 0; i < at.value.length; i++) {
        const item: unknown = at.value[i];
        if (item !== null && typeof item === 'object') pending.push({ value: item, path: `${at.path}.${i}` });
      }
    } else if (at.value !== null && typeof at.value === 'object') {
      for (const [key, item] of Object.entries(at.value)) {
        if (item !== null && typeof item === 'object') pending.push({ value: item, path: `${at.path}.${key}` });
      }
    }
  }
  return null;
}

/** Deeper bodies are refused: no contract record nests this far, and deep nesting is a way to exhaust the stack. */
export const MAX_BODY_DEPTH = 32;
const MAX_TEXT_PROBLEMS = 5;
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const ANY_CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** Control characters other than tab, LF and CR. */
// eslint-disable-next-line no-control-regex -- as above
const CONTROL_BUT_LINE_BREAKS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function allowanceAt(path: string, allowances: ControlCharacterAllowances): 'lineBreaks' | 'any' | undefined {
  for (const [field, allowed] of Object.entries(allowances)) {
    if (path === field || path.startsWith(`${field}.`)) return allowed;
  }
  return undefined;
}

/**
 * The problem of one text value at `path` (a lone surrogate, or a control character `allowances` does not allow
 * there), named as every validation refusal names it; null when it has none. Also checks the stream routes' query.
 */
export function textProblem(text: string, path: string, allowances: ControlCharacterAllowances = {}): string | null {
  if (LONE_SURROGATE.test(text)) return `${path}: must be well-formed Unicode text (it holds a lone surrogate)`;
  const allowed = allowanceAt(path, allowances);
  const forbidden = allowed === 'any' ? null : allowed === 'lineBreaks' ? CONTROL_BUT_LINE_BREAKS : ANY_CONTROL;
  if (forbidden?.test(text)) {
    return `${path}: must not contain control characters${allowed === 'lineBreaks' ? ' other than tab and line breaks' : ''}`;
  }
  return null;
}

/** Every text problem of the validated arguments, walked without recursion (a body may nest deeply). */
function textProblems(args: Record<string, unknown>, allowances: ControlCharacterAllowances): string[] {
  const problems: string[] = [];
  const pending: Array<{ value: unknown; path: string; depth: number }> = Object.entries(args).map(([k, v]) => ({
    value: v,
    path: k,
    depth: 0,
  }));
  while (pending.length && problems.length < MAX_TEXT_PROBLEMS) {
    const { value, path, depth } = pending.pop()!;
    if (typeof value === 'string') {
      const problem = textProblem(value, path, allowances);
      if (problem) problems.push(problem);
    } else if (value !== null && typeof value === 'object') {
      if (depth >= MAX_BODY_DEPTH) {
        problems.push(`${path}: nests deeper than ${MAX_BODY_DEPTH} levels`);
        continue;
      }
      if (Array.isArray(value)) {
        value.forEach((item, i) => pending.push({ value: item, path: `${path}.${i}`, depth: depth + 1 }));
      } else {
        for (const [key, item] of Object.entries(value)) {
          const at = `${path}.${key}`;
          const problem = textProblem(key, `${path} member name ${JSON.stringify(key.slice(0, 64))}`, {});
          if (problem) problems.push(problem);
          pending.push({ value: item, path: at, depth: depth + 1 });
        }
      }
    }
  }
  return problems;
}

/**
 * Picks the declared query fields; scalar fields take the first value, array fields every element of every value:
 * repeated (`logins=1&logins=2`), comma-joined (`logins=1,2`) or both, in order, so that bounds and problems count and
 * name the elements (`logins.2: …`) whichever way they were sent. (Every query list is of numbers: none holds a comma.)
 */
export function collectQuery(
  schema: z.ZodObject,
  params: Pick<URLSearchParams, 'has' | 'get' | 'getAll'>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries<z.ZodType>(schema.shape)) {
    if (!params.has(name)) continue;
    out[name] = acceptsArray(field) ? params.getAll(name).flatMap((v) => v.split(',')) : params.get(name);
  }
  return out;
}

/** The names of an entry's query lists (collected element by element, see collectQuery). */
export function queryLists(entry: Pick<Operation, 'query'>): ReadonlySet<string> {
  const shape = (entry.query?.shape ?? {}) as Record<string, z.ZodType>;
  return new Set(Object.keys(shape).filter((name) => acceptsArray(shape[name])));
}

/** Whether a (possibly wrapped) schema is an array: optional, default, nullable and pipe wrappers are looked through. */
function acceptsArray(schema: z.ZodType): boolean {
  // A wrapper's inner schema is `innerType` (optional, default, nullable) or `in` (pipe) on its definition.
  let s: { _zod?: { def?: { type: string; innerType?: unknown; in?: unknown } } } | undefined = schema;
  for (let depth = 0; s && depth < 8; depth++) {
    const def = s._zod?.def;
    if (!def) return false;
    if (def.type === 'array') return true;
    s = (def.innerType ?? def.in) as typeof s;
  }
  return false;
}
