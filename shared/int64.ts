/**
 * 64-bit ids (PF5 logins, tickets, deal, order and position ids) held exactly. An id is a JS number while it is a safe
 * integer (|id| ≤ 2^53 − 1) and a bigint beyond, never anything else: this one canonical form makes `===`, `Map`
 * and `Set` keys and `<` agree on ids wherever they meet, so 9007199254740993 (a bigint) is never confused with
 * 9007199254740992 (a number). The lossless JSON of `shared/losslessJson.ts` reads and writes ids in this form.
 */

export type Int64 = number | bigint;

export const INT64_MAX = 9223372036854775807n;
export const INT64_MIN = -9223372036854775808n;
const SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER);
const SAFE_MIN = -SAFE_MAX;

/** The canonical form of an integer: a number when safe, else a bigint. */
export function canonicalInt(value: bigint | number): Int64 {
  if (typeof value === 'number') return value;
  return value <= SAFE_MAX && value >= SAFE_MIN ? Number(value) : value;
}

/** Whether a value is an integer within int64 in the canonical form (a safe number, or a bigint beyond the safe range). */
export function isInt64(value: unknown): value is Int64 {
  if (typeof value === 'number') return Number.isSafeInteger(value);
  return (
    typeof value === 'bigint' && value <= INT64_MAX && value >= INT64_MIN && (value > SAFE_MAX || value < SAFE_MIN)
  );
}

/** Decimal digits (optionally signed) as an id, exactly; undefined when not an integer or outside int64. */
export function int64FromText(text: string): Int64 | undefined {
  if (!/^-?\d{1,400}$/.test(text)) return undefined;
  if (text.length <= 16) {
    const n = Number(text);
    if (Number.isSafeInteger(n)) return n;
  }
  const big = BigInt(text);
  return big > INT64_MAX || big < INT64_MIN ? undefined : canonicalInt(big);
}

/** Orders two ids (or two numbers) numerically, across the number / bigint forms. */
export function compareInt64(a: Int64, b: Int64): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `id + step`, in the canonical form. */
export function addInt64(id: Int64, step: number): Int64 {
  if (typeof id === 'number') {
    const sum = id + step;
    if (Number.isSafeInteger(sum)) return sum;
    return canonicalInt(BigInt(id) + BigInt(step));
  }
  return canonicalInt(id + BigInt(step));
}

/** An id as the number type callers that only do identity or display can take (the canonical value, typed loosely). */
export const asIdNumber = (id: Int64): number => id as number;
