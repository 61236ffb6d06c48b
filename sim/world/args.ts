/**
 * Reading command arguments: every check fails with a CommandError whose message names the field, using the
 * family's "bad parameters" code that the caller passes in.
 */
import { CommandError } from './commandError.js';
import { INT64_MAX, isInt64 } from '../../shared/int64.js';

export class ArgReader {
  constructor(
    private readonly args: Record<string, unknown>,
    private readonly badCode: number,
  ) {}

  fail(message: string): never {
    throw new CommandError(this.badCode, message);
  }

  has(field: string): boolean {
    return this.args[field] !== undefined && this.args[field] !== null;
  }

  int(field: string, opts: { min?: number; max?: number } = {}): number {
    const value = this.args[field];
    const min = opts.min ?? Number.MIN_SAFE_INTEGER;
    const max = opts.max ?? Number.MAX_SAFE_INTEGER;
    if (typeof value !== 'number' || !Number.isInteger(value)) this.fail(`${field} must be an integer`);
    if (value < min || value > max) this.fail(`${field} must be between ${min} and ${max}`);
    return value;
  }

  optionalInt(field: string, opts: { min?: number; max?: number } = {}): number | undefined {
    return this.has(field) ? this.int(field, opts) : undefined;
  }

  /**
   * A 64-bit id (a PF5 login or ticket), min .. 9223372036854775807: a number up to 2^53 − 1, beyond it the exact
   * bigint the lossless frame parse made (`shared/int64.ts`). Typed as a number: ids are only compared, used as keys
   * and echoed, never computed with, and the canonical form keeps `===` and Map keys exact across both forms.
   */
  id(field: string, opts: { min?: number } = {}): number {
    const value = this.args[field];
    const min = opts.min ?? 0;
    if (!isInt64(value)) this.fail(`${field} must be an integer`);
    if (value < min) this.fail(`${field} must be between ${min} and ${INT64_MAX}`);
    return value as number;
  }

  optionalId(field: string, opts: { min?: number } = {}): number | undefined {
    return this.has(field) ? this.id(field, opts) : undefined;
  }

  number(field: string): number {
    const value = this.args[field];
    if (typeof value !== 'number' || !Number.isFinite(value)) this.fail(`${field} must be a number`);
    return value;
  }

  optionalNumber(field: string): number | undefined {
    return this.has(field) ? this.number(field) : undefined;
  }

  string(field: string, opts: { max?: number } = {}): string {
    const value = this.args[field];
    if (typeof value !== 'string' || value.length === 0) this.fail(`${field} must be a non-empty string`);
    if (opts.max !== undefined && value.length > opts.max) this.fail(`${field} must be at most ${opts.max} characters`);
    return value;
  }

  optionalString(field: string, opts: { max?: number } = {}): string | undefined {
    return this.has(field) ? this.string(field, opts) : undefined;
  }

  intArray(field: string, opts: { min?: number; max?: number; maxItems?: number } = {}): number[] {
    const value = this.args[field];
    if (!Array.isArray(value)) this.fail(`${field} must be an array of integers`);
    if (opts.maxItems !== undefined && value.length > opts.maxItems)
      this.fail(`${field} must have at most ${opts.maxItems} items`);
    const min = opts.min ?? Number.MIN_SAFE_INTEGER;
    const max = opts.max ?? Number.MAX_SAFE_INTEGER;
    for (const item of value) {
      if (typeof item !== 'number' || !Number.isInteger(item) || item < min || item > max) {
        this.fail(`${field} must contain integers between ${min} and ${max}`);
      }
    }
    return value as number[];
  }

  /**
   * A ticket or login list (1..max, at most 100,000): a key named twice counts once, where it was first named. With
   * a bigint `max` (int64 ids) items beyond 2^53 − 1 are their exact bigints.
   */
  keyList(field: string, max: number | bigint): number[] {
    if (typeof max === 'number') return [...new Set(this.intArray(field, { min: 1, max, maxItems: 100_000 }))];
    const value = this.args[field];
    if (!Array.isArray(value)) this.fail(`${field} must be an array of integers`);
    if (value.length > 100_000) this.fail(`${field} must have at most 100000 items`);
    for (const item of value)
      if (!isInt64(item) || item < 1 || item > max) this.fail(`${field} must contain integers between 1 and ${max}`);
    return [...new Set(value as number[])];
  }

  object(field: string): Record<string, unknown> {
    const value = this.args[field];
    if (typeof value !== 'object' || value === null || Array.isArray(value)) this.fail(`${field} must be an object`);
    return value as Record<string, unknown>;
  }
}

/** The shared `{after?, limit?}` paging arguments; an absent limit means everything in one page. */
export function readPaging(reader: ArgReader, keyMax: number | bigint): { after: number | undefined; limit: number } {
  const after =
    typeof keyMax === 'bigint' ? reader.optionalId('after') : reader.optionalInt('after', { min: 0, max: keyMax });
  const limit = reader.optionalInt('limit', { min: 1, max: 1_000_000 }) ?? Number.MAX_SAFE_INTEGER;
  return { after, limit };
}
