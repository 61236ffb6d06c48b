/**
 * Input schemas shared by many catalog entries, with the service spec's limits. Path and query values arrive as
 * strings, so numeric and boolean fields coerce.
 */
import { z } from 'zod';
import { INT32_MAX } from '../records/primitives.js';

export const PAGE_LIMIT_MAX = 5000;

const digits = (what: string) => z.string().regex(/^\d+$/, `${what} must be a positive integer`);

/** A positive 32-bit integer sent as a path or query string (PF4 logins, tickets, orders). */
export const positiveInt32 = (what = 'value') =>
  digits(what).transform(Number).pipe(z.number().int().min(1, `${what} must be at least 1`).max(INT32_MAX, `${what} must be at most ${INT32_MAX}`));

/** A positive 64-bit integer (PF5 logins and tickets), kept within the safe-integer range. */
export const positiveInt64 = (what = 'value') =>
  digits(what).transform(Number).pipe(z.number().int().min(1, `${what} must be at least 1`).max(Number.MAX_SAFE_INTEGER, `${what} is too large`));

export const login32 = positiveInt32('login');
export const login64 = positiveInt64('login');
export const ticket32 = positiveInt32('ticket');

export const groupName = z.string().min(1, 'group must not be empty').max(16, 'group must be at most 16 characters');
export const symbolName = z.string().min(1, 'symbol must not be empty').max(12, 'symbol must be at most 12 characters');

export const pageQuery = {
  limit: digits('limit').transform(Number)
    .pipe(z.number().int().min(1, 'limit must be at least 1').max(PAGE_LIMIT_MAX, `limit must be at most ${PAGE_LIMIT_MAX}`))
    .optional(),
  cursor: z.string().max(512, 'cursor must be at most 512 characters').optional(),
};

export const booleanQuery = z.enum(['true', 'false']).transform((v) => v === 'true');
