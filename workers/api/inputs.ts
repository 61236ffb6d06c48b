/**
 * Validation of one call's path, query and body against its catalog entry, with messages that name the field path
 * and the rule (`login: login must be a positive integer`). Query arrays arrive as repeated parameters; query
 * parameters the entry does not declare are ignored.
 *
 * Text is checked here, once, for every field of every entry: after the schemas accepted the inputs, each string
 * that would reach the trading server (path and query values, body values and member names) must be well-formed
 * Unicode (no lone surrogate) and free of control characters (C0, DEL, C1), unless the entry allows them for that
 * field (`controlCharacters`). Bodies nest at most MAX_BODY_DEPTH levels.
 */
import type { z } from 'zod';
import type { ControlCharacterAllowances, Operation } from '../../shared/catalog/index.js';

/** Query parameters the edge consumes itself: they are never passed to the broker as operation arguments. */
export const CONTROL_QUERY = new Set(['requestTimeout', 'confirm']);

export type Inputs = { ok: true; args: Record<string, unknown> } | { ok: false; message: string };

/** The body as received: absent, parsed JSON, or not JSON at all. */
export type RawBody = { kind: 'none' } | { kind: 'json'; value: unknown } | { kind: 'malformed' };

export function validateInputs(
  entry: Operation,
  pathParams: Record<string, string>,
  url: Pick<URL, 'searchParams'>,
  body: RawBody,
): Inputs {
  const args: Record<string, unknown> = {};
  const problems: string[] = [];

  if (entry.params) {
    const r = entry.params.safeParse(pathParams);
    if (r.success) Object.assign(args, r.data);
    else problems.push(...describe(r.error));
  }
  if (entry.query) {
    const r = entry.query.safeParse(collectQuery(entry.query, url.searchParams));
    if (r.success) {
      for (const [k, v] of Object.entries(r.data)) if (!CONTROL_QUERY.has(k) && v !== undefined) args[k] = v;
    } else problems.push(...describe(r.error));
  }
  if (entry.body) {
    if (body.kind === 'malformed') problems.push('body: must be well-formed JSON');
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
      else problems.push(...describe(r.error, 'body'));
    }
  }
  if (!problems.length) problems.push(...textProblems(args, entry.controlCharacters ?? {}));
  return problems.length ? { ok: false, message: problems.join('; ') } : { ok: true, args };
}

/** Whether a parsed body holds a bigint (an integer beyond 2^53 − 1), walked without recursion and bounded. */
function hasBigint(value: unknown): boolean {
  const pending: unknown[] = [value];
  for (let seen = 0; pending.length && seen < 1_000_000; seen++) {
    const v = pending.pop();
    if (typeof v === 'bigint') return true;
    if (v !== null && typeof v === 'object') pending.push(...Object.values(v as object));
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
    .filter((path) => path.length > 0 && typeof path.reduce<unknown>((at, k) => (at as Record<PropertyKey, unknown> | null | undefined)?.[k as PropertyKey], body) === 'bigint');
  if (!paths.length) return body;
  const copy = structuredClone(body);
  for (const path of paths) {
    const parent = path.slice(0, -1).reduce<unknown>((at, k) => (at as Record<PropertyKey, unknown>)[k as PropertyKey], copy) as Record<PropertyKey, unknown>;
    const last = path[path.length - 1] as PropertyKey;
    parent[last] = Number(parent[last] as bigint);
  }
  return copy;
}

/** Deeper bodies are refused: no contract record nests this far, and deep nesting is a way to exhaust the stack. */
export const MAX_BODY_DEPTH = 32;
const MAX_TEXT_PROBLEMS = 5;
const ANY_CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** Control characters other than tab, LF and CR. */
const CONTROL_BUT_LINE_BREAKS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function allowanceAt(path: string, allowances: ControlCharacterAllowances): 'lineBreaks' | 'any' | undefined {
  for (const [field, allowed] of Object.entries(allowances)) {
    if (path === field || path.startsWith(`${field}.`)) return allowed;
  }
  return undefined;
}

function textProblem(text: string, path: string, allowances: ControlCharacterAllowances): string | null {
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
  const pending: Array<{ value: unknown; path: string; depth: number }> = Object.entries(args).map(([k, v]) => ({ value: v, path: k, depth: 0 }));
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

/** Picks the declared query fields; array fields take every repeated value, scalar fields the first. */
function collectQuery(schema: z.ZodObject<any>, params: URLSearchParams): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
    if (!params.has(name)) continue;
    out[name] = acceptsArray(field) ? params.getAll(name) : params.get(name);
  }
  return out;
}

/** Whether a (possibly wrapped) schema is an array: optional, default, nullable and pipe wrappers are looked through. */
function acceptsArray(schema: z.ZodType): boolean {
  let s: any = schema;
  for (let depth = 0; s && depth < 8; depth++) {
    const def = s._zod?.def;
    if (!def) return false;
    if (def.type === 'array') return true;
    s = def.innerType ?? def.in;
  }
  return false;
}

function describe(error: z.ZodError, prefix?: string): string[] {
  return error.issues.map((issue) => {
    const path = [...(prefix ? [prefix] : []), ...issue.path.map(String)].join('.');
    return path ? `${path}: ${issue.message}` : issue.message;
  });
}
