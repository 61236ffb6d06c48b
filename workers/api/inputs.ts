/**
 * Validation of one call's path, query and body against its catalog entry, with messages that name the field path
 * and the rule (`login: login must be a positive integer`). Query arrays arrive as repeated parameters; query
 * parameters the entry does not declare are ignored.
 */
import type { z } from 'zod';
import type { Operation } from '../../shared/catalog/index.js';

/** Query parameters the edge consumes itself: they are never passed to the broker as operation arguments. */
export const CONTROL_QUERY = new Set(['requestTimeout', 'confirm']);

export type Inputs = { ok: true; args: Record<string, unknown> } | { ok: false; message: string };

/** The body as received: absent, parsed JSON, or not JSON at all. */
export type RawBody = { kind: 'none' } | { kind: 'json'; value: unknown } | { kind: 'malformed' };

export function validateInputs(
  entry: Operation,
  pathParams: Record<string, string>,
  url: URL,
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
      const r = entry.body.safeParse(body.kind === 'json' ? body.value : undefined);
      if (r.success) args.body = r.data;
      else problems.push(...describe(r.error, 'body'));
    }
  }
  return problems.length ? { ok: false, message: problems.join('; ') } : { ok: true, args };
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
