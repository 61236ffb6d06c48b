/**
 * JSON that keeps 64-bit integers exact, for every JSON hop a PF5 id takes (the request body at the edge, both links,
 * the manager protocol, cached rows, answers). `parseJson` reads an integer token beyond 2^53 − 1 as a bigint (the
 * canonical form of `shared/int64.ts`); `stringifyJson` writes a bigint as its bare digits, a JSON number. Every other
 * value reads and writes exactly as JSON.parse / JSON.stringify do.
 *
 * Node 20 has neither `JSON.rawJSON` nor the reviver's `context.source`, so both directions are done here, and the
 * common case stays on the native code: `parseJson` answers JSON.parse's value unless that holds an integer beyond
 * 2^53 − 1 (looked for only when the text has 16 digits in a row), and `stringifyJson` tries JSON.stringify first,
 * walking the value itself only when that refused a bigint.
 */

const SAFE_MAX_TEXT = String(Number.MAX_SAFE_INTEGER);
/** 16 digits in a row: the text may hold an integer beyond 2^53 − 1 (or only a long fraction, or digits in a string). */
const LONG_DIGITS = /\d{16}/;
/** Deeper documents than this are refused by the exact parse (the native parse is used for everything else). */
const MAX_DEPTH = 512;
const SAFE = Number.MAX_SAFE_INTEGER;

/** Thrown by `parseJson` for well-formed JSON nested deeper than the exact parse reads (MAX_DEPTH levels). */
export class JsonTooDeepError extends SyntaxError {}

/**
 * JSON.parse, with integers beyond the safe range read as exact bigints. Throws SyntaxError on malformed text, and
 * JsonTooDeepError (a SyntaxError) when the exact parse is needed and the document nests deeper than MAX_DEPTH.
 *
 * The native parse runs first. Only when the text has 16 digits in a row and the parsed value holds an integer beyond
 * 2^53 − 1 (which any such token parses to, rounded) is the text read again exactly; a double written that way
 * (`1e20`) takes the exact parse too and comes out as the same double.
 */
export function parseJson(text: string): unknown {
  const value: unknown = JSON.parse(text);
  if (!LONG_DIGITS.test(text) || !holdsUnsafeInteger(value, 0)) return value;
  return new ExactParser(text).document();
}

/**
 * Where `text` stops being JSON: the offset (in UTF-16 units) of the first character JSON's grammar refuses, the text's
 * length when it ends too soon; undefined when it is JSON (or nests deeper than MAX_DEPTH). For errors that must say
 * where without quoting the text, as JSON.parse's message does.
 */
export function jsonSyntaxOffset(text: string): number | undefined {
  const parser = new ExactParser(text);
  try {
    parser.document();
    return undefined;
  } catch (error) {
    return error instanceof JsonTooDeepError ? undefined : parser.offset;
  }
}

function holdsUnsafeInteger(x: unknown, depth: number): boolean {
  if (typeof x === 'number') return (x > SAFE || x < -SAFE) && Number.isInteger(x);
  if (x === null || typeof x !== 'object') return false;
  if (depth > 256) return holdsUnsafeIntegerDeep(x);
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) if (holdsUnsafeInteger(x[i], depth + 1)) return true;
    return false;
  }
  for (const k in x) if (holdsUnsafeInteger((x as Record<string, unknown>)[k], depth + 1)) return true;
  return false;
}

/** The same check without recursion, for deeply nested values. */
function holdsUnsafeIntegerDeep(value: object): boolean {
  const pending: unknown[] = [value];
  while (pending.length) {
    const x = pending.pop();
    if (typeof x === 'number') {
      if ((x > SAFE || x < -SAFE) && Number.isInteger(x)) return true;
    } else if (x !== null && typeof x === 'object') {
      if (Array.isArray(x)) for (let i = 0; i < x.length; i++) pending.push(x[i]);
      else for (const k in x) pending.push((x as Record<string, unknown>)[k]);
    }
  }
  return false;
}

/** JSON.stringify (of a value, no replacer), with bigints written as bare digits. */
export function stringifyJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (!(error instanceof TypeError) || !/bigint/i.test(error.message)) throw error;
    return walk(value, '', []) ?? 'null';
  }
}

/** `stringifyJson` for a value that may be undefined (JSON.stringify answers undefined for it, as here). */
export function stringifyJsonMaybe(value: unknown): string | undefined {
  return value === undefined ? undefined : stringifyJson(value);
}

/**
 * The slow path of stringifyJson: JSON.stringify's rules (toJSON, undefined / functions / symbols left out of objects
 * and null in arrays, non-finite numbers null) plus bigints as digits. Each member is first tried natively, so only
 * the branches that hold a bigint are walked here.
 */
function walk(value: unknown, key: string, stack: object[]): string | undefined {
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON(key: string): unknown }).toJSON(key);
  }
  switch (typeof value) {
    case 'bigint':
      return value.toString();
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    case 'object':
      break;
    default:
      return JSON.stringify(value);
  }
  if (value === null) return 'null';
  if (value instanceof Number || value instanceof String || value instanceof Boolean) return JSON.stringify(value);
  if (stack.includes(value)) throw new TypeError('Converting circular structure to JSON');
  stack.push(value);
  const member = (item: unknown, at: string): string | undefined => {
    if (typeof item === 'bigint') return item.toString();
    if (item === null || typeof item !== 'object') return walk(item, at, stack);
    try {
      return JSON.stringify(item);
    } catch (error) {
      if (!(error instanceof TypeError) || !/bigint/i.test(error.message)) throw error;
      return walk(item, at, stack);
    }
  };
  let out: string;
  if (Array.isArray(value)) {
    out = '[';
    for (let i = 0; i < value.length; i++) out += (i ? ',' : '') + (member(value[i], String(i)) ?? 'null');
    out += ']';
  } else {
    out = '{';
    let first = true;
    for (const k of Object.keys(value)) {
      const text = member((value as Record<string, unknown>)[k], k);
      if (text === undefined) continue;
      out += `${first ? '' : ','}${JSON.stringify(k)}:${text}`;
      first = false;
    }
    out += '}';
  }
  stack.pop();
  return out;
}

const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
const WHITESPACE = /[ \t\n\r]*/y;
// eslint-disable-next-line no-control-regex -- JSON forbids raw control characters in strings: matching them is the point
const PLAIN_STRING = /"[^"\\\u0000-\u001f]*"/y;
// eslint-disable-next-line no-control-regex -- as above
const ESCAPED_STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;

/** A JSON reader that keeps big integers; strings with escapes are decoded by JSON.parse of the token itself. */
class ExactParser {
  private at = 0;

  constructor(private readonly text: string) {}

  /** How far the reader got: where it failed, after a failure. */
  get offset(): number {
    return this.at;
  }

  document(): unknown {
    const value = this.value(0);
    this.space();
    if (this.at !== this.text.length) this.fail();
    return value;
  }

  private fail(): never {
    throw new SyntaxError(`Unexpected token in JSON at position ${this.at}`);
  }

  private space(): void {
    WHITESPACE.lastIndex = this.at;
    WHITESPACE.test(this.text);
    this.at = WHITESPACE.lastIndex;
  }

  private value(depth: number): unknown {
    if (depth > MAX_DEPTH) throw new JsonTooDeepError(`JSON nests deeper than ${MAX_DEPTH} levels`);
    this.space();
    const c = this.text.charCodeAt(this.at);
    if (c === 0x22) return this.string();
    if (c === 0x7b) return this.object(depth);
    if (c === 0x5b) return this.array(depth);
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.number();
    if (this.text.startsWith('true', this.at)) {
      this.at += 4;
      return true;
    }
    if (this.text.startsWith('false', this.at)) {
      this.at += 5;
      return false;
    }
    if (this.text.startsWith('null', this.at)) {
      this.at += 4;
      return null;
    }
    return this.fail();
  }

  private string(): string {
    PLAIN_STRING.lastIndex = this.at;
    if (PLAIN_STRING.test(this.text)) {
      const s = this.text.slice(this.at + 1, PLAIN_STRING.lastIndex - 1);
      this.at = PLAIN_STRING.lastIndex;
      return s;
    }
    ESCAPED_STRING.lastIndex = this.at;
    if (!ESCAPED_STRING.test(this.text)) this.fail();
    const s = JSON.parse(this.text.slice(this.at, ESCAPED_STRING.lastIndex)) as string;
    this.at = ESCAPED_STRING.lastIndex;
    return s;
  }

  private number(): number | bigint {
    NUMBER.lastIndex = this.at;
    const m = NUMBER.exec(this.text);
    if (!m) this.fail();
    const token = m[0];
    this.at = NUMBER.lastIndex;
    if (m[1] !== undefined || m[2] !== undefined) return Number(token);
    const digits = token.charCodeAt(0) === 0x2d ? token.length - 1 : token.length;
    const unsafe =
      digits > 16 || (digits === 16 && (token.charCodeAt(0) === 0x2d ? token.slice(1) : token) > SAFE_MAX_TEXT);
    return unsafe ? BigInt(token) : Number(token);
  }

  private array(depth: number): unknown[] {
    this.at++;
    const out: unknown[] = [];
    this.space();
    if (this.text.charCodeAt(this.at) === 0x5d) {
      this.at++;
      return out;
    }
    for (;;) {
      out.push(this.value(depth + 1));
      this.space();
      const c = this.text.charCodeAt(this.at++);
      if (c === 0x5d) return out;
      if (c !== 0x2c) {
        this.at--;
        this.fail();
      }
    }
  }

  private object(depth: number): Record<string, unknown> {
    this.at++;
    const out: Record<string, unknown> = {};
    this.space();
    if (this.text.charCodeAt(this.at) === 0x7d) {
      this.at++;
      return out;
    }
    for (;;) {
      this.space();
      if (this.text.charCodeAt(this.at) !== 0x22) this.fail();
      const key = this.string();
      this.space();
      if (this.text.charCodeAt(this.at++) !== 0x3a) {
        this.at--;
        this.fail();
      }
      const value = this.value(depth + 1);
      // An own member, as JSON.parse makes it, even for "__proto__".
      if (key === '__proto__')
        Object.defineProperty(out, key, { value, writable: true, enumerable: true, configurable: true });
      else out[key] = value;
      this.space();
      const c = this.text.charCodeAt(this.at++);
      if (c === 0x7d) return out;
      if (c !== 0x2c) {
        this.at--;
        this.fail();
      }
    }
  }
}
