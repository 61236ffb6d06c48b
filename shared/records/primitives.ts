/**
 * The primitive types of the contract as zod schemas: 32- and 64-bit integers, ISO 8601 date-times, base64 blobs and
 * flag sets (names of the set bits joined by ", ", `None` for none, `Bit<n>` for an unnamed bit). Enum and flag names
 * are read in any case and answered in the contract's spelling.
 */
import { z } from 'zod';
import { INT64_MAX, INT64_MIN, isInt64 } from '../int64.js';

export const INT32_MAX = 2147483647;
/** The most characters any text field of a contract record may hold (the contract itself gives no lengths). */
export const TEXT_MAX = 4096;
export const int32 = z.number().int().min(-2147483648).max(INT32_MAX);
/**
 * A 64-bit integer as the lossless JSON reads it (`shared/losslessJson.ts`): a safe-integer number, or a bigint
 * beyond 2^53 − 1 up to the int64 bounds. A number outside the safe range could only be a rounded one: refused.
 */
export const int64 = z.custom<number | bigint>(isInt64, {
  error: (issue) =>
    typeof issue.input === 'bigint' || (typeof issue.input === 'number' && Number.isInteger(issue.input))
      ? `must be an integer from ${INT64_MIN} to ${INT64_MAX}, written in digits`
      : 'must be an integer',
});
export const dateTime = z.iso.datetime({ offset: true, local: true });
export const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64');

/**
 * A contract enum: one of its members, read in any case (`mn1` is `Mn1`, as the reference service's binders read
 * names) and answered in the contract's spelling.
 */
export function enumOf<const T extends readonly [string, ...string[]]>(members: T) {
  const byName = new Map(members.map((m) => [m.toLowerCase(), m]));
  return z.preprocess((v) => (typeof v === 'string' ? (byName.get(v.toLowerCase()) ?? v) : v), z.enum(members));
}

/** A flag set: member names in any case (or `Bit<n>`) joined by commas, answered as the contract's names joined by ", ". */
export function flagSet(members: readonly string[], name: string) {
  const byName = new Map(members.map((m) => [m.toLowerCase(), m]));
  const canonical = (part: string) =>
    byName.get(part.toLowerCase()) ?? (/^bit\d{1,2}$/i.test(part) ? `Bit${part.slice(3)}` : undefined);
  return z
    .string()
    .max(1024)
    .refine((v) => v.split(',').every((p) => canonical(p.trim()) !== undefined), {
      message: `must be ${name} members joined by ", " (${members.join(', ')})`,
    })
    .transform((v) =>
      v
        .split(',')
        .map((p) => canonical(p.trim())!)
        .join(', '),
    );
}
