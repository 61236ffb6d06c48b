/**
 * Reading a command's arguments in the conformance test servers (the correct base and its broken variants): every
 * refusal is the kit's ResultError with the family's bad-arguments code and a message naming the field and its rule,
 * never a value sent (so a password given as an argument never comes back).
 */
import { ResultError } from '../../kit/index.js';
import { isInt64, type Int64 } from '../../../shared/int64.js';

export type Args = Record<string, unknown>;

export class ArgReader {
  constructor(
    private readonly args: Args,
    private readonly badArgs: number,
    private readonly prefix = '',
  ) {}

  fail(message: string): never {
    throw new ResultError(this.badArgs, message);
  }

  private name(field: string): string {
    return `${this.prefix}${field}`;
  }

  has(field: string): boolean {
    return this.args[field] !== undefined && this.args[field] !== null;
  }

  /** The fields present that are not among `known`, refused by name. */
  only(known: readonly string[]): void {
    for (const field of Object.keys(this.args)) {
      if (!known.includes(field))
        this.fail(
          `${this.name(field)} is not a field this server takes (${known.map((f) => this.name(f)).join(', ')})`,
        );
    }
  }

  int(field: string, min: number, max: number): number {
    const value = this.args[field];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      this.fail(`${this.name(field)} must be an integer from ${min} to ${max}`);
    }
    return value;
  }

  optionalInt(field: string, min: number, max: number): number | undefined {
    return this.has(field) ? this.int(field, min, max) : undefined;
  }

  boolean(field: string): boolean {
    const value = this.args[field];
    if (typeof value !== 'boolean') this.fail(`${this.name(field)} must be a boolean`);
    return value;
  }

  /** A 64-bit id in the canonical form of shared/int64.ts (a safe number, or a bigint beyond). */
  id(field: string): Int64 {
    const value = this.args[field];
    if (!isInt64(value) || value < 0) this.fail(`${this.name(field)} must be an integer from 0 to 9223372036854775807`);
    return value;
  }

  optionalId(field: string): Int64 | undefined {
    return this.has(field) ? this.id(field) : undefined;
  }

  number(field: string): number {
    const value = this.args[field];
    if (typeof value !== 'number' || !Number.isFinite(value)) this.fail(`${this.name(field)} must be a finite number`);
    return value;
  }

  string(field: string, max: number, min = 1): string {
    const value = this.args[field];
    if (typeof value !== 'string' || value.length < min || value.length > max) {
      this.fail(`${this.name(field)} must be a string of ${min} to ${max} characters`);
    }
    return value;
  }

  optionalString(field: string, max: number): string | undefined {
    return this.has(field) ? this.string(field, max, 0) : undefined;
  }

  /** A nested object, read by a reader of its own whose messages name `field.`. */
  object(field: string): ArgReader {
    const value = this.args[field];
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      this.fail(`${this.name(field)} must be an object`);
    return new ArgReader(value as Args, this.badArgs, `${this.name(field)}.`);
  }

  /** A list of integers of at most `maxItems`. */
  intList(field: string, min: number, max: number, maxItems: number): number[] {
    const value = this.args[field];
    if (
      !Array.isArray(value) ||
      value.length > maxItems ||
      !value.every((v) => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max)
    ) {
      this.fail(`${this.name(field)} must be a list of at most ${maxItems} integers from ${min} to ${max}`);
    }
    return value as number[];
  }

  /** The fields present, for a patch. */
  entries(): Array<[string, unknown]> {
    return Object.entries(this.args).filter(([, value]) => value !== undefined && value !== null);
  }
}
