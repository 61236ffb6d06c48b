/**
 * wrangler.toml as the local edge reads it: the worker's entry, compatibility date, D1 database and Durable Object
 * bindings come from the file wrangler deploys, so `npm start` and the tests run the worker with the bindings it has
 * on Cloudflare and nothing is copied by hand.
 *
 * `parseToml` reads the part of TOML wrangler.toml is written in: `#` comments, `[table]` and `[[array.of.tables]]`
 * headers with dotted bare keys, `key = value` with a bare or dotted key, and values that are strings (basic, with
 * escapes, or literal), integers, booleans, one-line arrays and inline tables. Anything else (multi-line strings or
 * arrays, dates, floats, a key defined twice) is refused with the line it is on, never read some other way.
 */
import { readFileSync } from 'node:fs';

type Value = string | number | boolean | Value[] | Table;
interface Table {
  [key: string]: Value;
}

export class TomlError extends Error {}

/** The TOML document `text` as plain objects; `source` names it in errors. */
export function parseToml(text: string, source = 'toml'): Table {
  const root: Table = {};
  let current = root;
  text.split(/\r?\n/).forEach((raw, index) => {
    const fail = (why: string): never => {
      throw new TomlError(`${source}:${index + 1}: ${why}`);
    };
    const line = new Cursor(raw, fail);
    line.space();
    if (line.done()) return;
    if (line.take('[[')) {
      const path = line.keyPath();
      line.expect(']]');
      line.end();
      const parent = walk(root, path.slice(0, -1), fail);
      const last = path[path.length - 1];
      const list = parent[last] ?? (parent[last] = []);
      if (!Array.isArray(list)) fail(`${path.join('.')} is not an array of tables`);
      const table: Table = {};
      (list as Value[]).push(table);
      current = table;
    } else if (line.take('[')) {
      const path = line.keyPath();
      line.expect(']');
      line.end();
      current = walk(root, path, fail);
    } else {
      line.keyValue(current);
      line.end();
    }
  });
  return root;
}

/** The table at `path` under `table`, created where missing; an array of tables gives its last table. */
function walk(table: Table, path: string[], fail: (why: string) => never): Table {
  let at = table;
  for (const key of path) {
    const next = at[key] ?? (at[key] = {});
    if (Array.isArray(next)) {
      const last = next[next.length - 1];
      if (typeof last !== 'object' || last === null || Array.isArray(last)) fail(`${key} is not a table`);
      at = last;
    } else if (typeof next === 'object') {
      at = next;
    } else {
      fail(`${key} is not a table`);
    }
  }
  return at;
}

class Cursor {
  private at = 0;
  constructor(
    private readonly text: string,
    readonly fail: (why: string) => never,
  ) {}

  done(): boolean {
    return this.at >= this.text.length || this.text[this.at] === '#';
  }
  space(): void {
    while (this.text[this.at] === ' ' || this.text[this.at] === '\t') this.at++;
  }
  take(token: string): boolean {
    if (!this.text.startsWith(token, this.at)) return false;
    this.at += token.length;
    this.space();
    return true;
  }
  expect(token: string): void {
    if (!this.take(token)) this.fail(`expected ${token}`);
  }
  end(): void {
    this.space();
    if (!this.done()) this.fail(`unexpected ${this.text.slice(this.at)}`);
  }

  key(): string {
    const bare = /^[A-Za-z0-9_-]+/.exec(this.text.slice(this.at));
    if (bare) {
      this.at += bare[0].length;
      this.space();
      return bare[0];
    }
    if (this.text[this.at] === '"' || this.text[this.at] === "'") {
      const key = this.string();
      this.space();
      return key;
    }
    return this.fail('expected a key');
  }
  keyPath(): string[] {
    const path = [this.key()];
    while (this.take('.')) path.push(this.key());
    return path;
  }
  keyValue(into: Table): void {
    const path = this.keyPath();
    this.expect('=');
    const value = this.value();
    const table = walk(into, path.slice(0, -1), this.fail);
    const last = path[path.length - 1];
    if (last in table) this.fail(`${path.join('.')} is defined twice`);
    table[last] = value;
  }

  value(): Value {
    const c = this.text[this.at];
    let value: Value;
    if (c === '"' || c === "'") value = this.string();
    else if (c === '[') value = this.array();
    else if (c === '{') value = this.inlineTable();
    else {
      const word = /^[^\s,\]}#]+/.exec(this.text.slice(this.at))?.[0] ?? '';
      if (word === 'true' || word === 'false') value = word === 'true';
      else if (/^[+-]?(0|[1-9](_?\d)*)$/.test(word)) value = Number(word.replace(/_/g, ''));
      else return this.fail(`unsupported value ${word || this.text.slice(this.at)}`);
      this.at += word.length;
    }
    this.space();
    return value;
  }
  string(): string {
    const quote = this.text[this.at++];
    if (this.text.startsWith(quote.repeat(2), this.at)) this.fail('multi-line strings are not supported');
    let out = '';
    for (;;) {
      const c = this.text[this.at++];
      if (c === undefined) return this.fail('unterminated string');
      if (c === quote) return out;
      if (c !== '\\' || quote === "'") {
        out += c;
        continue;
      }
      const e = this.text[this.at++];
      const simple: Record<string, string> = { '"': '"', '\\': '\\', b: '\b', t: '\t', n: '\n', f: '\f', r: '\r' };
      if (e in simple) out += simple[e];
      else if (e === 'u' || e === 'U') {
        const digits = e === 'u' ? 4 : 8;
        const hex = this.text.slice(this.at, this.at + digits);
        if (!new RegExp(`^[0-9A-Fa-f]{${digits}}$`).test(hex)) this.fail('bad unicode escape');
        out += String.fromCodePoint(parseInt(hex, 16));
        this.at += digits;
      } else this.fail(`bad escape \\${e ?? ''}`);
    }
  }
  array(): Value[] {
    this.expect('[');
    const items: Value[] = [];
    while (!this.take(']')) {
      if (this.done()) this.fail('arrays must close on their line');
      items.push(this.value());
      if (!this.take(',') && this.text[this.at] !== ']') this.fail('expected , or ]');
    }
    return items;
  }
  inlineTable(): Table {
    this.expect('{');
    const table: Table = {};
    if (this.take('}')) return table;
    for (;;) {
      this.keyValue(table);
      if (this.take('}')) return table;
      this.expect(',');
    }
  }
}

/** The part of wrangler.toml's top level (local development) the local edge is built from. */
export interface WranglerConfig {
  main: string;
  compatibility_date: string;
  vars?: Record<string, string>;
  d1_databases: Array<{
    binding: string;
    database_name: string;
    database_id: string;
    preview_database_id?: string;
    migrations_dir: string;
  }>;
  durable_objects: { bindings: Array<{ name: string; class_name: string }> };
  /** Cron triggers: the worker's `scheduled` handler runs on each (the local edge fires them each minute). */
  triggers?: { crons?: string[] };
  /** Cloudflare Queues: the worker's producers and the queues it consumes (the webhook deliveries). */
  queues?: {
    producers?: Array<{ binding: string; queue: string }>;
    consumers?: Array<{
      queue: string;
      max_batch_size?: number;
      max_batch_timeout?: number;
      max_retries?: number;
      dead_letter_queue?: string;
    }>;
  };
  migrations: Array<{ tag: string; new_sqlite_classes?: string[]; new_classes?: string[]; deleted_classes?: string[] }>;
}

/** Reads and checks the wrangler.toml at `file`: the fields the local edge needs must be there with their types. */
export function readWranglerConfig(file: string): WranglerConfig {
  const config = parseToml(readFileSync(file, 'utf8'), file) as unknown as WranglerConfig;
  const problem = (what: string): never => {
    throw new TomlError(`${file}: ${what}`);
  };
  if (typeof config.main !== 'string') problem('main must be a string');
  if (typeof config.compatibility_date !== 'string') problem('compatibility_date must be a string');
  if (!Array.isArray(config.d1_databases) || config.d1_databases.length !== 1)
    problem('needs exactly one [[d1_databases]]');
  if (!Array.isArray(config.durable_objects?.bindings)) problem('needs [[durable_objects.bindings]]');
  if (!Array.isArray(config.migrations)) problem('needs [[migrations]]');
  return config;
}

/**
 * The classes whose storage is SQLite once every migration has run: those a migration creates with
 * `new_sqlite_classes`, less those a later one deletes.
 */
export function sqliteClasses(config: WranglerConfig): Set<string> {
  const classes = new Set<string>();
  for (const m of config.migrations) {
    for (const name of m.new_sqlite_classes ?? []) classes.add(name);
    for (const name of m.deleted_classes ?? []) classes.delete(name);
  }
  return classes;
}
