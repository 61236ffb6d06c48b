/**
 * The docs check (`npm test` runs it through checkDocs.test.ts; `npx tsx scripts/checkDocs.ts` prints its findings):
 * holds every Markdown file of the repository to the code. What each check accepts, and why, is in docs/testing.md,
 * "The docs check". Reads files only: it starts no process.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENVIRONMENTS } from '../shared/environment.js';
import { LINK_PING_EVERY_MS, LINK_PING_TIMEOUT_MS } from '../shared/frames.js';
import { isEntryModule } from '../shared/entryModule.js';

export interface Problem {
  file: string;
  line: number;
  message: string;
}

/** What the checks look at: the Markdown files' text and the facts of the code they are held to. */
export interface DocsTree {
  /** Every Markdown file, by its path from the root (`docs/api.md`), with its text. */
  markdown: Map<string, string>;
  /** Every file of the repository (not ignored), by its path from the root. */
  files: Set<string>;
  /** The scripts of package.json. */
  scripts: Set<string>;
  /** Every variable shared/environment.ts declares, with its default as read when unset (undefined: none). */
  declared: Map<string, unknown>;
  /** Names a tool reads from the environment itself (benches, drills, tests): bench/, test/, `*.test.ts`. */
  toolVariables: Set<string>;
  /** UPPER_SNAKE names the code declares as constants, types or bindings: not environment variables. */
  identifiers: Set<string>;
}

/** A figure that more than one doc states: its value, and where each statement of it must stand. */
export interface Figure {
  name: string;
  value: string;
  /**
   * Phrases holding `{}` where the value stands. Each must be found in each of its files with this value; anywhere
   * else in any doc, the same phrase with another value is a contradiction.
   */
  phrases: { phrase: string; files: string[] }[];
}

/**
 * The figures stated in several docs. A measured figure changes in its perf record first, then here, and the check
 * names every doc still stating the old one.
 */
export const FIGURES: Figure[] = [
  {
    name: "a scale-sized platform's heap on a broker (docs/perf/2026-11-27-pages-and-record-memory.md)",
    value: '313',
    phrases: [
      { phrase: '{} MB (0.83 KB per cached record', files: ['README.md', 'docs/capacity.md'] },
      { phrase: '{} MB per scale-sized platform', files: ['docs/capacity.md'] },
    ],
  },
  {
    name: "a demo-sized platform's heap on a broker (docs/perf/2026-11-27-broker-platforms.md)",
    value: '6.5',
    phrases: [
      { phrase: '{} MB of heap', files: ['README.md'] },
      { phrase: '{} MB per demo-sized', files: ['docs/capacity.md'] },
    ],
  },
  {
    name: 'scale-sized platforms held by the default heap of a broker on an 8 GB host (about 2 GB / 313 MB)',
    value: 'six',
    phrases: [
      { phrase: 'as little as 2 GB, which holds {}', files: ['docs/capacity.md'] },
      { phrase: 'about {} scale-sized platforms on an 8 GB host', files: ['docs/deploying.md'] },
    ],
  },
  {
    name: 'scale-sized platforms on an 8 GB, half-a-core broker host (docs/perf/2026-11-27-broker-platforms.md)',
    value: '9–13',
    phrases: [
      { phrase: 'carries {} scale-sized platforms', files: ['README.md'] },
      { phrase: 'or {} scale-sized hot platforms', files: ['docs/capacity.md'] },
    ],
  },
  {
    name: 'demo-sized platforms on an 8 GB, half-a-core broker host (docs/perf/2026-11-27-broker-platforms.md)',
    value: '35–90',
    phrases: [
      { phrase: 'or {} demo-sized ones', files: ['README.md'] },
      { phrase: '{} demo-sized or', files: ['docs/capacity.md'] },
    ],
  },
  {
    name: "a link object's heartbeat interval on a broker pair (LINK_PING_EVERY_MS, shared/frames.ts)",
    value: String(LINK_PING_EVERY_MS / 1000),
    phrases: [
      { phrase: 'pings that broker every {} s', files: ['README.md'] },
      { phrase: 'pinged on its link every {} s', files: ['docs/architecture.md'] },
    ],
  },
  {
    name: 'the longest a lost broker keeps its link objects (LINK_PING_EVERY_MS plus LINK_PING_TIMEOUT_MS, shared/frames.ts)',
    value: String((LINK_PING_EVERY_MS + LINK_PING_TIMEOUT_MS) / 1000),
    phrases: [
      { phrase: 'is left within {} s', files: ['README.md'] },
      { phrase: 'plus its timeout ({} s)', files: ['docs/architecture.md'] },
      { phrase: '1.52 s, bound {} s', files: ['docs/perf/2026-11-27-failover-drill.md'] },
    ],
  },
  {
    name: "how long a broker pair's heartbeat waits for a ping's answer (LINK_PING_TIMEOUT_MS, shared/frames.ts)",
    value: String(LINK_PING_TIMEOUT_MS / 1000),
    phrases: [
      { phrase: 'a ping unanswered for {} s', files: ['docs/architecture.md'] },
      { phrase: 'a ping every 0.4 s given {} s', files: ['docs/perf/2026-11-27-failover-drill.md'] },
    ],
  },
  {
    name: 'the largest request body the edge reads (MAX_BODY_BYTES, workers/app.ts)',
    value: '1 MiB',
    phrases: [{ phrase: 'body of more than {} ', files: ['docs/api.md', 'docs/operating.md'] }],
  },
];

/** A figure written as a word (`holds six`). */
const NUMBER_WORDS = 'one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve';

/** Names that look like repository paths but are labels: the mutation runs' name for both trading engines. */
const NOT_PATHS = new Set(['sim/engines']);

/** The dated measurement records: history, which states what was measured then, so no figure is held to them. */
const isRecord = (file: string) => /^docs\/perf\/\d{4}-/.test(file);

/** Extensions of the files a backticked name may name: source, data and documents of this repository. */
const FILE_EXTENSIONS = /\.(ts|mts|mjs|js|json|md|toml|yaml|yml|sql|html|css|sh|png|txt|example)$/;
/** Extensions of source files, which a doc may name by their file name alone (`accessLog.ts`). */
const SOURCE_EXTENSIONS = /\.(ts|mts|mjs|js|sql)$/;
const ENV_NAME = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/;

const lineStarts = new Map<string, number[]>();

/** The line of `text` an offset falls on, 1-based. */
function lineOf(text: string, offset: number): number {
  let starts = lineStarts.get(text);
  if (!starts) {
    starts = [0];
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
    lineStarts.set(text, starts);
  }
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (starts[middle] <= offset) low = middle;
    else high = middle - 1;
  }
  return low + 1;
}

interface Parsed {
  /** The text with fenced blocks and inline code blanked (line breaks kept): links are read here. */
  prose: string;
  /** Inline code spans, with their offsets. */
  spans: { text: string; offset: number }[];
  /** Fenced code blocks, with their offsets. */
  fences: { text: string; offset: number }[];
}

const parsedTexts = new Map<string, Parsed>();

/** Splits a Markdown text into prose, inline code spans and fenced blocks, keeping every offset. */
export function parseMarkdown(text: string): Parsed {
  const known = parsedTexts.get(text);
  if (known) return known;
  const fences: Parsed['fences'] = [];
  const blanks: [number, number][] = [];
  const fence = /^( {0,3})(`{3,}|~{3,})[^\n]*\n([\s\S]*?)(?:^\1?\2[`~]*[ \t]*$|(?![\s\S]))/gm;
  for (const match of text.matchAll(fence)) {
    fences.push({ text: match[3], offset: match.index + match[0].indexOf(match[3]) });
    blanks.push([match.index, match.index + match[0].length]);
  }
  const inFence = (at: number) => blanks.some(([start, end]) => at >= start && at < end);
  const spans: Parsed['spans'] = [];
  // A code span stays within its paragraph: each paragraph is searched on its own.
  for (const paragraph of text.matchAll(/(?:[^\n]|\n(?![ \t]*\n))+/g)) {
    if (!paragraph[0].includes('`')) continue;
    for (const match of paragraph[0].matchAll(/(`+)([\s\S]*?[^`])\1(?!`)/g)) {
      const at = paragraph.index + match.index;
      if (fences.length > 0 && inFence(at)) continue;
      spans.push({ text: match[2].replace(/\n/g, ' ').trim(), offset: at + match[1].length });
      blanks.push([at, at + match[0].length]);
    }
  }
  blanks.sort((a, b) => a[0] - b[0]);
  const parts: string[] = [];
  let from = 0;
  for (const [start, end] of blanks) {
    if (end <= from) continue;
    const at = Math.max(start, from);
    parts.push(text.slice(from, at), text.slice(at, end).replace(/[^\n]/g, ' '));
    from = end;
  }
  parts.push(text.slice(from));
  const prose = parts.join('');
  const parsed = { prose, spans, fences };
  parsedTexts.set(text, parsed);
  return parsed;
}

/** GitHub's anchor of a heading's text: lower case, punctuation dropped, spaces as hyphens. */
export function headingSlug(heading: string): string {
  const rendered = heading
    .replace(/`([^`]*)`/g, '$1')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim();
  return rendered
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a Markdown text defines: its headings' slugs (repeats numbered as GitHub does) and HTML ids. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const { prose } = parseMarkdown(text);
  const lines = text.split('\n');
  const proseLines = prose.split('\n');
  for (let i = 0; i < lines.length; i++) {
    // A heading line outside fenced blocks: the prose line keeps its `#`s where the text is not code.
    const heading = /^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$/.exec(lines[i]);
    if (!heading || !/^ {0,3}#/.test(proseLines[i])) continue;
    const slug = headingSlug(heading[2]);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  for (const match of text.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(match[1]);
  return anchors;
}

const folderSets = new WeakMap<DocsTree, Set<string>>();

/** Every folder holding a file of the tree. */
function foldersOf(tree: DocsTree): Set<string> {
  let folders = folderSets.get(tree);
  if (!folders) {
    folders = new Set();
    for (const file of tree.files)
      for (let at = file.indexOf('/'); at > 0; at = file.indexOf('/', at + 1)) folders.add(file.slice(0, at));
    folderSets.set(tree, folders);
  }
  return folders;
}

/** Every relative link and anchor resolves: the file or folder exists, and the anchor is one of the file's. */
export function checkLinks(tree: DocsTree): Problem[] {
  const problems: Problem[] = [];
  const anchorCache = new Map<string, Set<string>>();
  const anchors = (file: string) => {
    let found = anchorCache.get(file);
    if (!found) anchorCache.set(file, (found = anchorsOf(tree.markdown.get(file) ?? '')));
    return found;
  };
  const isFolder = (path: string) => foldersOf(tree).has(path);
  for (const [file, text] of tree.markdown) {
    const { prose } = parseMarkdown(text);
    const targets: { target: string; offset: number }[] = [];
    for (const match of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) {
      targets.push({ target: match[1], offset: match.index });
    }
    for (const match of prose.matchAll(/^ {0,3}\[[^\]]+\]:\s*(\S+)/gm))
      targets.push({ target: match[1], offset: match.index });
    for (const match of prose.matchAll(/<(?:a|img)\s[^>]*(?:href|src)="([^"]+)"/g))
      targets.push({ target: match[1], offset: match.index });
    for (const { target, offset } of targets) {
      if (target === '' || /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue;
      const line = lineOf(text, offset);
      const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
      const path =
        pathPart === ''
          ? file
          : posix.normalize(posix.join(posix.dirname(file), decodeURI(pathPart))).replace(/\/$/, '');
      if (path.startsWith('..')) {
        problems.push({ file, line, message: `link ${target} leaves the repository` });
        continue;
      }
      if (!tree.files.has(path) && !isFolder(path)) {
        problems.push({ file, line, message: `link ${target}: ${path} does not exist` });
        continue;
      }
      if (anchor === undefined) continue;
      if (!tree.markdown.has(path)) {
        // GitHub's line anchors of a source file (`#L12`, `#L12-L20`).
        if (/^L\d+(?:-L\d+)?$/.test(anchor)) continue;
        problems.push({
          file,
          line,
          message: `link ${target}: ${path} is not a Markdown file, so it has no anchor #${anchor}`,
        });
      } else if (!anchors(path).has(decodeURIComponent(anchor))) {
        problems.push({ file, line, message: `link ${target}: ${path} has no heading whose anchor is #${anchor}` });
      }
    }
  }
  return problems;
}

/** Every `npm run X` (and `npm start`, `npm test`) a doc names is a script of package.json. */
export function checkNpmRuns(tree: DocsTree): Problem[] {
  const problems: Problem[] = [];
  for (const [file, text] of tree.markdown) {
    for (const match of text.matchAll(/\bnpm (?:run(?:-script)? ([A-Za-z0-9][\w:.-]*[\w])|(start|test)\b)/g)) {
      const script = match[1] ?? match[2];
      if (!tree.scripts.has(script)) {
        problems.push({
          file,
          line: lineOf(text, match.index),
          message: `npm ${match[1] ? 'run ' : ''}${script}: package.json has no script "${script}"`,
        });
      }
    }
  }
  return problems;
}

/** The environment variables a Markdown text names, with their offsets (the rule: docs/testing.md, "The docs check"). */
export function variablesNamed(
  text: string,
  declared: ReadonlyMap<string, unknown>,
  tools: ReadonlySet<string> = new Set(),
): { name: string; offset: number }[] {
  // A name is taken for one of ours when it starts as a declared or a tool's variable does (`BROKER_`, `BENCH_`):
  // other programs' variables (`NODE_OPTIONS`), result codes (`RET_ERR_NOTMAIN`) and an example's own are left alone.
  const families = new Set([...declared.keys(), ...tools].map((name) => name.split('_')[0]));
  const { spans, fences } = parseMarkdown(text);
  const named: { name: string; offset: number }[] = [];
  const isVariable = (name: string) => declared.has(name) || (ENV_NAME.test(name) && families.has(name.split('_')[0]));
  for (const span of spans) {
    const whole = /^\$?\{?([A-Z][A-Z0-9_]*)\}?$/.exec(span.text);
    if (whole && isVariable(whole[1])) named.push({ name: whole[1], offset: span.offset });
    for (const match of span.text.matchAll(/(?:^|[\s(])(?:-e )?([A-Z][A-Z0-9_]*)=/g)) {
      if (isVariable(match[1])) named.push({ name: match[1], offset: span.offset });
    }
    // A span listing several: `AUTH_ISSUER`, `AUTH_JWKS_URL` are two spans; `TERMINAL_PORT, GATEWAY_URL` is one.
    if (!whole && /^[A-Z][A-Z0-9_]*(?:,\s*[A-Z][A-Z0-9_]*)+$/.test(span.text)) {
      for (const name of span.text.split(/,\s*/)) if (isVariable(name)) named.push({ name, offset: span.offset });
    }
  }
  for (const fence of fences) {
    for (const match of fence.text.matchAll(/(?:^|[\s"'(])(?:-e\s+)?([A-Z][A-Z0-9_]*)=|\$\{?([A-Z][A-Z0-9_]*)/gm)) {
      const name = match[1] ?? match[2];
      if (isVariable(name)) named.push({ name, offset: fence.offset + match.index });
    }
  }
  return named;
}

/** The variables of docs/operating.md's configuration table, with their lines and default cells. */
export function configurationTable(text: string): { name: string; line: number; defaultCell: string }[] {
  const rows: { name: string; line: number; defaultCell: string }[] = [];
  const lines = text.split('\n');
  const start = lines.findIndex((line) => /^## Configuration\s*$/.test(line));
  if (start < 0) return rows;
  for (let i = start + 1; i < lines.length && !/^## /.test(lines[i]); i++) {
    const cells = /^\|([^|]*)\|([^|]*)\|/.exec(lines[i]);
    if (!cells) continue;
    for (const match of cells[1].matchAll(/`([A-Z][A-Z0-9_]*)`/g))
      rows.push({ name: match[1], line: i + 1, defaultCell: cells[2].trim() });
  }
  return rows;
}

/**
 * Every variable a doc names is declared in shared/environment.ts (or is a tool's, a constant's or another
 * program's), every declared variable is a row of docs/operating.md's configuration table and every row a declared
 * variable, and a default a doc states for one (`NAME` (N), or the table's default cell) is the code's.
 */
export function checkVariables(tree: DocsTree, table = 'docs/operating.md'): Problem[] {
  const problems: Problem[] = [];
  for (const [file, text] of tree.markdown) {
    for (const { name, offset } of variablesNamed(text, tree.declared, tree.toolVariables)) {
      if (tree.declared.has(name) || tree.toolVariables.has(name) || tree.identifiers.has(name)) continue;
      problems.push({
        file,
        line: lineOf(text, offset),
        message: `${name} is not declared in shared/environment.ts (nor read by a bench, drill or test, nor a constant of the code)`,
      });
    }
    // `NAME` (N): a default, unless a range (`(1 to 256)`) or a rate derived from it (`(500 calls/s)`) follows.
    for (const match of text.matchAll(
      /`([A-Z][A-Z0-9_]*)` \((\d[\d,]*(?:\.\d+)?)(?![\d.])( ?(?:KiB|MiB|GiB|MB|s\b|ms\b))?(?! to\b| ?[a-z]+\/)/g,
    )) {
      const [, name, number, unit] = match;
      const wanted = tree.declared.get(name);
      if (typeof wanted !== 'number') continue;
      const stated = statedNumber(number, unit, name);
      if (stated !== undefined && stated !== wanted) {
        problems.push({
          file,
          line: lineOf(text, match.index),
          message: `${name} (${number}${unit ?? ''}): its default is ${wanted} (shared/environment.ts)`,
        });
      }
    }
  }
  const tableText = tree.markdown.get(table);
  if (tableText === undefined)
    return [...problems, { file: table, line: 1, message: 'the configuration table is missing' }];
  const rows = configurationTable(tableText);
  const listed = new Set(rows.map((row) => row.name));
  for (const name of tree.declared.keys()) {
    if (!listed.has(name))
      problems.push({
        file: table,
        line: 1,
        message: `${name} is declared in shared/environment.ts but is no row of the configuration table`,
      });
  }
  for (const row of rows) {
    if (!tree.declared.has(row.name)) {
      problems.push({
        file: table,
        line: row.line,
        message: `${row.name} is a row of the configuration table but is not declared in shared/environment.ts`,
      });
      continue;
    }
    const wanted = tree.declared.get(row.name);
    const cell = /^`(\d+(?:\.\d+)?)`/.exec(row.defaultCell);
    if (cell && typeof wanted === 'number' && !row.defaultCell.includes(',') && Number(cell[1]) !== wanted) {
      problems.push({
        file: table,
        line: row.line,
        message: `${row.name}'s default is given as ${cell[1]}; shared/environment.ts has ${wanted}`,
      });
    }
  }
  return problems;
}

/** A number a doc states for a variable, in the variable's own unit: undefined when the unit cannot be compared. */
function statedNumber(number: string, unit: string | undefined, name: string): number | undefined {
  const value = Number(number.replace(/,/g, ''));
  const u = unit?.trim();
  if (!u) return value;
  const bytes = { KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 }[u as 'KiB'];
  if (bytes) return name.endsWith('_BYTES') ? value * bytes : undefined;
  if (u === 'MB') return name.endsWith('_MB') ? value : undefined;
  if (u === 's') return name.endsWith('_SECONDS') ? value : undefined;
  if (u === 'ms') return name.endsWith('_MS') ? value : undefined;
  return undefined;
}

/** What a backticked text names as a path of the repository, or null when it is not one (the rule: docs/testing.md). */
export function pathNamed(span: string, topFolders: ReadonlySet<string>): { path: string; bare: boolean } | null {
  let path = span.replace(/[,.;:]$/, '');
  if (
    /\s/.test(path) ||
    path.includes('://') ||
    /^[/~$<]/.test(path) ||
    (path.startsWith('.') && !path.startsWith('../')) ||
    NOT_PATHS.has(path)
  )
    return null;
  path = path.replace(/:\d+(?:-\d+)?$/, '');
  const first = path.split('/')[0];
  if (path.includes('/')) {
    if (topFolders.has(first) || path.startsWith('../') || FILE_EXTENSIONS.test(path) || path.endsWith('/'))
      return { path, bare: false };
    return null;
  }
  // A file name alone: one part before the extension, or an aspect and `.test`/`.d` (`brokerLink.frames.test.ts`);
  // `ctx.storage.sql` is code.
  if (
    SOURCE_EXTENSIONS.test(path) &&
    /^[\w<>*{}-]+(?:\.[\w-]+)?(?:\.test|\.d)?\.\w+$/.test(path) &&
    !/^[a-z]\w*\.[a-z]\w*\.\w+$/.test(path.replace(/\.(test|d)\./, '.'))
  )
    return { path, bare: true };
  return null;
}

/** A pattern that names files: `*` and `<placeholder>` stand for one segment's part, `**` and `...` for any. */
function pathPattern(path: string): RegExp | null {
  if (!/[*<>…]|\.\.\./.test(path)) return null;
  const source = path
    .replace(/\/$/, '')
    .split(/(\*\*\/?|\*|<[^>]*>|…|\.\.\.)/)
    .map((part) =>
      part === '**' || part === '**/' || part === '…' || part === '...'
        ? '.*'
        : part === '*' || /^<.*>$/.test(part)
          ? '[^/]*'
          : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('');
  return new RegExp(`^${source}(?:/.*)?$`);
}

/** Every path in backticks exists: a file or folder from the root, or from the doc's own folder. */
export function checkPaths(tree: DocsTree, ignored: ReadonlySet<string> = new Set()): Problem[] {
  const problems: Problem[] = [];
  const topFolders = new Set([...tree.files].filter((file) => file.includes('/')).map((file) => file.split('/')[0]));
  const basenames = new Set([...tree.files].map((file) => posix.basename(file)));
  const exists = (path: string) => {
    const clean = path.replace(/\/$/, '');
    if (tree.files.has(clean) || foldersOf(tree).has(clean)) return true;
    const pattern = pathPattern(clean);
    return pattern !== null && [...tree.files].some((file) => pattern.test(file));
  };
  for (const [file, text] of tree.markdown) {
    for (const span of parseMarkdown(text).spans) {
      const named = pathNamed(span.text, topFolders);
      if (!named) continue;
      const first = named.path.replace(/^\.\.\//, '').split('/')[0];
      if (ignored.has(first)) continue;
      if (named.bare) {
        const pattern = pathPattern(named.path);
        if (basenames.has(named.path) || (pattern && [...basenames].some((name) => pattern.test(name)))) continue;
        problems.push({
          file,
          line: lineOf(text, span.offset),
          message: `${named.path}: no file of the repository has this name`,
        });
        continue;
      }
      const fromDoc = posix.normalize(posix.join(posix.dirname(file), named.path));
      if (exists(named.path) || (!fromDoc.startsWith('..') && exists(fromDoc))) continue;
      // A path under a folder the text has just named (`broken/world.ts` of bridge/conformance/): its end must exist.
      const tail = `/${named.path.replace(/^(\.\.\/)+/, '').replace(/\/$/, '')}`;
      if (
        !named.path.startsWith('../') &&
        [...tree.files].some((f) => `/${f}`.includes(`${tail}/`) || `/${f}`.endsWith(tail))
      )
        continue;
      problems.push({
        file,
        line: lineOf(text, span.offset),
        message: `${named.path} does not exist (from the root or from ${posix.dirname(file)}/)`,
      });
    }
  }
  return problems;
}

/** Each figure stands with its value in every file its phrases name, and no doc states one of its phrases otherwise. */
export function checkFigures(tree: DocsTree, figures: readonly Figure[] = FIGURES): Problem[] {
  const problems: Problem[] = [];
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ /g, '\\s+');
  for (const figure of figures) {
    for (const { phrase, files } of figure.phrases) {
      const [before, after] = phrase.split('{}') as [string, string];
      const exact = new RegExp(escape(before) + escape(figure.value) + escape(after));
      for (const file of files) {
        const text = tree.markdown.get(file);
        if (text === undefined)
          problems.push({ file, line: 1, message: `figure "${figure.name}": the file is missing` });
        else if (!exact.test(text))
          problems.push({
            file,
            line: 1,
            message: `figure "${figure.name}": "${phrase.replace('{}', figure.value)}" is not stated here`,
          });
      }
      const any = new RegExp(escape(before) + `(\\d[\\d.,–-]*(?:\\s?[KMG]i?B)?|${NUMBER_WORDS})` + escape(after), 'g');
      // A file without the phrase's longest word cannot state it: most files are passed over without a regex.
      const word = `${before} ${after}`.split(/\s+/).reduce((a, b) => (b.length > a.length ? b : a), '');
      for (const [file, text] of tree.markdown) {
        if (isRecord(file) || !text.includes(word)) continue;
        for (const match of text.matchAll(any)) {
          if (match[1] === figure.value) continue;
          problems.push({
            file,
            line: lineOf(text, match.index),
            message: `figure "${figure.name}" is ${figure.value}, stated here as ${match[1]}`,
          });
        }
      }
    }
  }
  return problems;
}

/** Every check over the tree, in file and line order. */
export function checkDocs(tree: DocsTree, ignored: ReadonlySet<string> = new Set()): Problem[] {
  return [
    ...checkLinks(tree),
    ...checkNpmRuns(tree),
    ...checkVariables(tree),
    ...checkPaths(tree, ignored),
    ...checkFigures(tree),
  ].sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
}

/** `file:line: message`, one line each. */
export function formatProblems(problems: readonly Problem[]): string {
  return problems.map((p) => `${p.file}:${p.line}: ${p.message}`).join('\n');
}

/** The names .gitignore ignores by folder or file name (`node_modules/`, `.env`, `.stryker-tmp*`), as patterns. */
function ignoredNames(root: string): RegExp[] {
  const patterns = [/^\.git$/, /^node_modules$/];
  const file = join(root, '.gitignore');
  if (!existsSync(file)) return patterns;
  for (const raw of readFileSync(file, 'utf8').split('\n')) {
    const line = raw.trim().replace(/^\//, '').replace(/\/$/, '');
    if (line === '' || line.startsWith('#') || line.startsWith('!') || line.includes('/')) continue;
    const source = line
      .replace(/[.+^$()|[\]\\{}]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.');
    patterns.push(new RegExp('^' + source + '$'));
  }
  return patterns;
}

/** Every file under `root` that .gitignore does not ignore, by its path from the root. */
function walk(root: string, ignore: RegExp[]): string[] {
  const files: string[] = [];
  const visit = (folder: string) => {
    for (const entry of readdirSync(join(root, folder), { withFileTypes: true })) {
      if (ignore.some((pattern) => pattern.test(entry.name))) continue;
      const path = folder ? `${folder}/${entry.name}` : entry.name;
      if (entry.isDirectory()) visit(path);
      else if (
        entry.isFile() ||
        (entry.isSymbolicLink() && statSync(join(root, path), { throwIfNoEntry: false })?.isFile())
      )
        files.push(path);
    }
  };
  visit('');
  return files;
}

/** The variables shared/environment.ts declares, with their defaults. */
export function declaredVariables(): Map<string, unknown> {
  const declared = new Map<string, unknown>();
  for (const schema of Object.values(ENVIRONMENTS)) {
    for (const [name, variable] of Object.entries(schema.shape)) {
      if (declared.has(name)) continue;
      const unset = (variable as { safeParse(value: unknown): { success: boolean; data?: unknown } }).safeParse(
        undefined,
      );
      declared.set(name, unset.success ? unset.data : undefined);
    }
  }
  return declared;
}

/** The tree of the repository at `root`. */
export function loadTree(root: string): { tree: DocsTree; ignored: Set<string> } {
  const ignore = ignoredNames(root);
  const files = walk(root, ignore);
  const markdown = new Map(
    files.filter((file) => file.endsWith('.md')).map((file) => [file, readFileSync(join(root, file), 'utf8')]),
  );
  const packageJson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    scripts?: Record<string, string>;
  };
  const toolVariables = new Set<string>();
  const identifiers = new Set<string>();
  for (const file of files) {
    if (!/\.(ts|mts|mjs|js)$/.test(file)) continue;
    const text = readFileSync(join(root, file), 'utf8');
    for (const match of text.matchAll(/\b(?:const|let|var|enum|function|class|type|interface)\s+([A-Z][A-Z0-9_]*)\b/g))
      identifiers.add(match[1]);
    const isTool = /^(bench|test)\//.test(file) || /\.test\.ts$/.test(file) || /^vitest[.\w]*\.config\.ts$/.test(file);
    if (!isTool) continue;
    for (const match of text.matchAll(
      /process\.env(?:\.([A-Z][A-Z0-9_]*)|\[['"]([A-Z][A-Z0-9_]*)['"]\])|\b\w+\(\s*['"]([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)['"]/g,
    )) {
      toolVariables.add(match[1] ?? match[2] ?? match[3]);
    }
  }
  // Wrangler's bindings (`binding = "LINKS"`, `name = "STREAMS"`) and compose's own variables (`${GATEWAY_SUBNET:-…}`).
  for (const file of ['wrangler.toml', 'compose.yaml']) {
    if (!existsSync(join(root, file))) continue;
    const text = readFileSync(join(root, file), 'utf8');
    for (const match of text.matchAll(/\b(?:binding|name|class_name)\s*=\s*"([A-Z][A-Z0-9_]*)"/g))
      identifiers.add(match[1]);
    for (const match of text.matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)) toolVariables.add(match[1]);
  }
  const ignored = new Set(
    readFileSync(join(root, '.gitignore'), 'utf8')
      .split('\n')
      .map((line) => line.trim().replace(/^\//, '').replace(/\/$/, ''))
      .filter((line) => line && !line.startsWith('#') && !/[*/!]/.test(line)),
  );
  return {
    tree: {
      markdown,
      files: new Set(files),
      scripts: new Set(Object.keys(packageJson.scripts ?? {})),
      declared: declaredVariables(),
      toolVariables,
      identifiers,
    },
    ignored,
  };
}

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

if (isEntryModule(import.meta.url)) {
  const { tree, ignored } = loadTree(ROOT);
  const problems = checkDocs(tree, ignored);
  if (problems.length > 0) {
    console.error(formatProblems(problems));
    console.error(`\ndocs check: ${problems.length} problem(s)`);
    process.exitCode = 1;
  } else {
    console.log(`docs check: ${tree.markdown.size} Markdown files agree with the code`);
  }
}
