/**
 * Helpers the PF4 command modules share: contract-record validation with the field named in the message, time
 * arguments, and the not-found answer.
 */
import type { z } from 'zod';
import { PF4_RESULT } from '../../../shared/resultCodes.js';
import { CommandError } from '../../world/commandError.js';
import { ArgReader } from '../../world/args.js';

export const bad = PF4_RESULT.InvalidData;
export const INT32_MAX = 2147483647;

/** Parses `value` with a contract schema; the error names the offending field under `prefix`. */
export function parseRecord<T = Record<string, unknown>>(schema: z.ZodType, value: unknown, prefix: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const keys = (issue as { keys?: string[] }).keys;
    const field =
      issue.path.length > 0
        ? `${prefix}.${issue.path.join('.')}`
        : keys?.length
          ? `${prefix}.${keys.join(', ')}`
          : prefix;
    throw new CommandError(bad, `${field}: ${issue.message}`);
  }
  return parsed.data as T;
}

/** Reads the fields of a nested record (a request body) with the field named under `prefix` in every message. */
export function recordReader(record: Record<string, unknown>, prefix: string): ArgReader {
  return new (class extends ArgReader {
    override fail(message: string): never {
      return super.fail(`${prefix}.${message}`);
    }
  })(record, bad);
}

export function notFound(what: string): never {
  throw new CommandError(bad, `${what} not found`);
}

/** An optional ISO 8601 time argument as epoch milliseconds. */
export function optionalTime(args: ArgReader, raw: Record<string, unknown>, field: string): number | undefined {
  if (!args.has(field)) return undefined;
  const value = raw[field];
  const ms = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) args.fail(`${field} must be an ISO 8601 date-time`);
  return ms;
}

export function requiredTime(args: ArgReader, raw: Record<string, unknown>, field: string): number {
  const ms = optionalTime(args, raw, field);
  if (ms === undefined) args.fail(`${field} is required`);
  return ms;
}

export function optionalBool(args: ArgReader, raw: Record<string, unknown>, field: string): boolean | undefined {
  if (!args.has(field)) return undefined;
  if (typeof raw[field] !== 'boolean') args.fail(`${field} must be a boolean`);
  return raw[field];
}
