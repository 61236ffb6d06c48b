/**
 * Input schemas shared by many catalog entries, with the service spec's limits. Path and query values arrive as
 * strings, so numeric, boolean and date-time fields convert: handlers receive numbers, booleans and ISO strings.
 * Every message names the field and the rule (`login must be at least 1`).
 */
import { z } from 'zod';
import { INT32_MAX, dateTime, int64 } from '../records/primitives.js';
import { INT64_MAX, int64FromText } from '../int64.js';
import { openapiComponents } from '../records/contract.js';
import * as contract from '../records/contract.js';
import { EnLogTypeMembers } from '../records/contract.js';

export const PAGE_LIMIT_MAX = 5000;
const INT32_MIN = -2147483648;

/**
 * How the API description publishes a field whose schema parses text: a path or query value arrives as a string, but
 * a login is published as an integer with its bounds, a flag as a boolean, a time as a date-time. The OpenAPI
 * generator shows this in place of the text schema; parsing is untouched.
 */
export const publishedSchemas = z.registry<Record<string, unknown>>();
const publish = <T extends z.ZodType>(schema: T, json: Record<string, unknown>): T => {
  publishedSchemas.add(schema, json);
  return schema;
};
const integer = (min: number, max: number) => ({
  type: 'integer',
  format: min >= INT32_MIN && max <= INT32_MAX ? 'int32' : 'int64',
  minimum: min,
  maximum: max,
});

const digits = (what: string) => z.string().regex(/^\d+$/, `${what} must be a positive integer`);

/** A whole number sent as text, within [min, max]. */
export const intText = (what: string, min = INT32_MIN, max = INT32_MAX) =>
  publish(
    z
      .string()
      .regex(/^-?\d+$/, `${what} must be an integer`)
      .transform(Number)
      .pipe(z.number().int().min(min, `${what} must be at least ${min}`).max(max, `${what} must be at most ${max}`)),
    integer(min, max),
  );

/** A positive 32-bit integer sent as a path or query string (PF4 logins, tickets, orders). */
export const positiveInt32 = (what = 'value') =>
  publish(
    digits(what)
      .transform(Number)
      .pipe(
        z.number().int().min(1, `${what} must be at least 1`).max(INT32_MAX, `${what} must be at most ${INT32_MAX}`),
      ),
    integer(1, INT32_MAX),
  );

/**
 * A positive 64-bit integer (PF5 logins and tickets), 1 .. 9223372036854775807, read exactly: the handler gets a
 * number up to 2^53 − 1 and a bigint beyond (`shared/int64.ts`), never a rounded neighbour. Published as an int64
 * with its minimum; the format itself bounds it above (an exact maximum does not fit a JSON double).
 */
export const positiveInt64 = (what = 'value') =>
  publish(
    digits(what).transform((text, ctx) => {
      const id = int64FromText(text);
      if (id === undefined) ctx.addIssue({ code: 'custom', message: `${what} must be at most ${INT64_MAX}` });
      else if (id < 1) ctx.addIssue({ code: 'custom', message: `${what} must be at least 1` });
      else return id;
      return z.NEVER;
    }),
    { type: 'integer', format: 'int64', minimum: 1 },
  );

/**
 * A 64-bit id in a JSON body (`min` .. 9223372036854775807): a number, or the exact bigint the lossless body parse
 * makes of an integer beyond 2^53 − 1. Messages name the field (`login must be at least 1`).
 */
export const int64Body = (what: string, min = 1) =>
  publish(
    z
      .custom<number | bigint>((v) => typeof v === 'number' || typeof v === 'bigint', {
        error: (issue) =>
          issue.input === undefined || issue.input === null ? `${what} is required` : `${what} must be an integer`,
      })
      .superRefine((v, ctx) => {
        if (typeof v === 'number' && !Number.isInteger(v))
          ctx.addIssue({ code: 'custom', message: `${what} must be an integer` });
        else if (v < min) ctx.addIssue({ code: 'custom', message: `${what} must be at least ${min}` });
        else if (typeof v === 'number' ? !Number.isSafeInteger(v) : v > INT64_MAX) {
          // A double beyond 2^53 − 1 (1e19) was rounded before it got here; a bigint beyond int64 does not fit.
          ctx.addIssue({ code: 'custom', message: `${what} must be at most ${INT64_MAX}, written in digits` });
        }
      }),
    { type: 'integer', format: 'int64', minimum: min },
  );

// The contract's int64 fields in bodies, as published.
publishedSchemas.add(int64, { type: 'integer', format: 'int64' });

/** A zero-based position in a configuration list (0 .. int32 max). */
export const position = (what = 'pos') => intText(what, 0, INT32_MAX);

/** A finite number sent as text (prices). */
export const numberText = (what: string) =>
  publish(
    z
      .string()
      .regex(/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/, `${what} must be a number`)
      .transform(Number)
      // Digits beyond a double's range read as ±Infinity, which z.number() refuses itself: the message is set there.
      .pipe(z.number({ error: () => `${what} must be a finite number` })),
    { type: 'number', format: 'double' },
  );

/** An ISO 8601 date-time sent as text; answered to the handler as the same ISO string. */
export const dateTimeText = (what: string) =>
  publish(
    z
      .string()
      .max(64, `${what} must be at most 64 characters`)
      .refine(
        (v) => dateTime.safeParse(v).success && !Number.isNaN(Date.parse(v)),
        `${what} must be an ISO 8601 date-time`,
      )
      // A time without an offset is UTC (the spec's times are UTC), never the machine's local time.
      .transform((v) => new Date(/(Z|[+-]\d\d:?\d\d)$/i.test(v) ? v : `${v}Z`).toISOString()),
    { type: 'string', format: 'date-time', maxLength: 64 },
  );

/** Unix seconds as a 32-bit signed count from 1970 (0 .. 2038-01-19). */
export const unixSeconds32 = (what: string) => intText(what, 0, INT32_MAX);

/**
 * The most values one id list of a read may hold (`?logins=`, `?orders=`, `?tickets=`, a body of tickets): an answer
 * of that many full records stays well within the bound on one answer, and one call cannot ask the trading server for
 * more than a page's worth of records. Duplicates count, then are dropped (docs/api.md#lists-of-ids).
 */
export const LIST_VALUES_MAX = 1_000;

/** A list without its repeated values, in the order of their first appearance. */
export const distinct = <T>(values: T[]): T[] => [...new Set(values)];

/**
 * A query list of positive 32-bit integers, 1 to `max` values: repeated (`?logins=1&logins=2`), comma-joined
 * (`?logins=1,2`) or both (the edge splits the values, shared/catalog/inputs.ts); each element is checked on its own.
 * A value listed twice is asked for once.
 */
export const int32List = (what: string, max = LIST_VALUES_MAX) =>
  z
    .array(positiveInt32(what))
    .min(1, `${what} must list at least one value`)
    .max(max, `${what} must list at most ${max} values`)
    .transform(distinct);

/** A query list of positive 64-bit integers, repeated or comma-joined as int32List, each value once. */
export const int64List = (what: string, max = LIST_VALUES_MAX) =>
  z
    .array(positiveInt64(what))
    .min(1, `${what} must list at least one value`)
    .max(max, `${what} must list at most ${max} values`)
    .transform(distinct);

/**
 * Contract enums whose members are numbered in the order the contract lists them, as the service spec shows
 * (`EnLogType` default 4 = `Full`): in a path or query they are also read by that number. The spec gives no number for
 * the other enums (a chart period's number, for one, is not its position), so those are read by name only.
 */
const NUMBERED_IN_ORDER = new Set<readonly string[]>([EnLogTypeMembers]);

/**
 * One of the members of a contract enum, sent as its name in any case (`MN1` is `Mn1`) or, for an enum numbered in
 * order (NUMBERED_IN_ORDER), as its number; the handler receives the contract's spelling. Published as the enum.
 */
export const enumText = <T extends readonly [string, ...string[]]>(what: string, members: T) => {
  const byName = new Map(members.map((m) => [m.toLowerCase(), m as T[number]]));
  const numbered = NUMBERED_IN_ORDER.has(members);
  const message = `${what} must be one of ${members.join(', ')}${numbered ? ` or its number 0 to ${members.length - 1}` : ''}`;
  return publish(
    z.string({ error: () => message }).transform((v, ctx): T[number] => {
      const member = byName.get(v.toLowerCase()) ?? (numbered && /^\d{1,3}$/.test(v) ? members[Number(v)] : undefined);
      if (member !== undefined) return member;
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    }),
    { type: 'string', enum: [...members] },
  );
};

/**
 * A flag set in a path or query: member names in any case joined by commas (`Raw, Normal`), or the number whose set
 * bits they are (`bits` gives each named bit's value; input-only members such as `All` have none). The handler receives
 * the contract's names joined by ", ", each once. `zero` is what the number 0 (no bit set) reads as: the caller's
 * choice, else `None` where the set has that member, else 0 is refused.
 */
export const flagText = (
  what: string,
  members: readonly string[],
  bits: Readonly<Record<string, number>>,
  { zero, maxLength = 1024 }: { zero?: string; maxLength?: number } = {},
) => {
  const byName = new Map(members.map((m) => [m.toLowerCase(), m]));
  const none = zero ?? (members.includes('None') ? 'None' : undefined);
  const named = Object.entries(bits);
  const allBits = named.reduce((all, [, bit]) => all | bit, 0);
  const numbers = named.map(([name, bit]) => `${name} ${bit}`).join(', ');
  const message = `${what} must be ${members.join(', ')} or several of them joined by ", ", or the number of their bits (${numbers})`;
  return publish(
    z
      .string()
      .max(maxLength, `${what} must be at most ${maxLength} characters`)
      .transform((v, ctx) => {
        let names: Array<string | undefined>;
        if (/^\d{1,10}$/.test(v.trim())) {
          const n = Number(v.trim());
          names =
            n === 0
              ? [none]
              : n > allBits || (n & ~allBits) !== 0
                ? [undefined]
                : named.filter(([, bit]) => (n & bit) !== 0).map(([name]) => name);
        } else {
          names = v.split(',').map((p) => byName.get(p.trim().toLowerCase()));
        }
        if (names.some((n) => n === undefined)) {
          ctx.addIssue({ code: 'custom', message });
          return z.NEVER;
        }
        return [...new Set(names as string[])].join(', ');
      }),
    {
      type: 'string',
      description: `Names joined by ", " (${members.join(', ')}) or the number of their bits (${numbers}).`,
    },
  );
};

export const login32 = positiveInt32('login');
export const login64 = positiveInt64('login');
export const ticket32 = positiveInt32('ticket');
export const order32 = positiveInt32('order');

export const groupName = z.string().min(1, 'group must not be empty').max(16, 'group must be at most 16 characters');
export const symbolName = z.string().min(1, 'symbol must not be empty').max(12, 'symbol must be at most 12 characters');
/** A group or symbol mask: comma-separated names or patterns, `*` any run, a leading `!` excludes. */
export const maskText = z.string().min(1, 'mask must not be empty').max(1024, 'mask must be at most 1024 characters');

export const pageQuery = {
  limit: publish(
    digits('limit')
      .transform(Number)
      .pipe(
        z
          .number()
          .int()
          .min(1, 'limit must be at least 1')
          .max(PAGE_LIMIT_MAX, `limit must be at most ${PAGE_LIMIT_MAX}`),
      ),
    integer(1, PAGE_LIMIT_MAX),
  ).optional(),
  cursor: z.string().max(512, 'cursor must be at most 512 characters').optional(),
};

/** A boolean query value, `true` or `false` in any case (a client's generated code may write `True`). */
export const booleanQuery = publish(
  z.string({ error: () => 'must be true or false' }).transform((v, ctx) => {
    const word = v.toLowerCase();
    if (word !== 'true' && word !== 'false') {
      ctx.addIssue({ code: 'custom', message: 'must be true or false' });
      return z.NEVER;
    }
    return word === 'true';
  }),
  { type: 'boolean' },
);

/** The `confirm` query of destructive operations (the edge checks it is `true` before validation). */
export const confirmQuery = { confirm: booleanQuery.optional() };

/** A contract record as a request body: the generated strict schema (an unknown field is refused, named). */
export function contractBody(name: string): z.ZodType {
  const schema = (contract as unknown as Record<string, z.ZodType>)[name];
  if (!schema || !(name in openapiComponents)) throw new Error(`no contract record ${name}`);
  return schema;
}

/**
 * The zod type name of a schema, looking through `z.lazy` (the contract's references) and into the target of a pipe
 * (a contract enum reads its name in any case before it is the enum).
 */
function defType(schema: z.ZodType): string | undefined {
  type Def = { type?: string; getter?: () => z.ZodType; out?: z.ZodType };
  const defOf = (s: z.ZodType) => (s as unknown as { _zod?: { def?: Def } })._zod?.def;
  let def = defOf(schema);
  for (let depth = 0; def?.type === 'lazy' && def.getter && depth < 4; depth++) def = defOf(def.getter());
  if (def?.type === 'pipe' && def.out) def = defOf(def.out);
  return def?.type;
}

/**
 * A JSON merge patch (RFC 7386) of a contract record: a required JSON object whose members are fields of the record,
 * each with the field's type or null. Unknown members and wrong types are refused naming the field.
 */
export function mergePatchBody(
  name: string,
  options: { immutable?: readonly string[] } = {},
): z.ZodType<Record<string, unknown>> {
  const record = contractBody(name) as z.ZodObject;
  const shape: Record<string, z.ZodType> = {};
  for (const [field, schema] of Object.entries<z.ZodType>(record.shape)) {
    const inner = (schema as z.ZodOptional<z.ZodType>).unwrap();
    // null empties a field (RFC 7386 removal on a record of fixed shape); an enum that cannot be null has no empty
    // value, so a null there is refused here rather than sent to the server.
    const noEmpty = defType(inner) === 'enum';
    shape[field] = options.immutable?.includes(field)
      ? z.never({ error: () => `${field} cannot be changed` }).optional()
      : noEmpty
        ? z
            .union([inner, z.null()])
            .refine((v) => v !== null, `${field} cannot be emptied (null): give one of its values`)
            .optional()
        : inner.nullable().optional();
  }
  return z
    .strictObject(shape, {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? `unknown field ${issue.keys.join(', ')}`
          : 'must be a JSON object (a merge patch)',
    })
    .refine((v) => Object.keys(v).length > 0, 'a merge patch must change at least one field');
}
