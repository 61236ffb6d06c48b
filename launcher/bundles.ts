/**
 * Bundles of the project's entries, built with esbuild and kept between processes: every test file that starts a
 * stack, `npm start` and the benchmarks run the same worker, broker and simulator, and bundling or transpiling them
 * costs a second or more of CPU each time. A kept bundle is used only while every file it was built from reads the
 * same and every project folder holding one lists the same names (a file added beside an import can change what it
 * resolves to); anything else builds again. `npm ci` empties the cache with the rest of node_modules.
 */
import { build, version as esbuildVersion, type BuildOptions } from 'esbuild';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BUNDLE_CACHE = join(root, 'node_modules', '.cache', 'bundles');

/** What a kept bundle was built from, and the file holding it (named after its contents, so never rewritten). */
interface KeptBundle {
  files: string[];
  fingerprint: string;
  script: string;
}

const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 24);
const recordPath = (entry: string, kind: string) =>
  join(BUNDLE_CACHE, `${digest(`${esbuildVersion}\0${kind}\0${resolve(entry)}`)}.json`);

/**
 * The contents of `files`, the names in each project folder holding one (not node_modules: packages change by
 * content), and the tsconfig.json files esbuild reads for them (from those folders up to the root).
 */
function sourcesFingerprint(files: string[]): string {
  const hash = createHash('sha256');
  for (const file of files) hash.update(file).update('\0').update(readFileSync(file)).update('\0');
  const folders = new Set(files.filter((f) => !f.includes('node_modules')).map(dirname));
  const configs = new Set<string>();
  for (const folder of [...folders].sort()) {
    hash.update(folder).update('\0').update(readdirSync(folder).sort().join('\0')).update('\0');
    for (let dir = folder; dir.startsWith(root); dir = dirname(dir)) {
      if (existsSync(join(dir, 'tsconfig.json'))) configs.add(join(dir, 'tsconfig.json'));
      if (dir === root) break;
    }
  }
  for (const config of [...configs].sort()) hash.update(config).update('\0').update(readFileSync(config)).update('\0');
  return hash.digest('hex');
}

/** The path of the kept bundle of `entry` built as `kind`, while its sources read as they did; else undefined. */
function keptScript(entry: string, kind: string): string | undefined {
  try {
    const { files, fingerprint, script } = JSON.parse(readFileSync(recordPath(entry, kind), 'utf8')) as KeptBundle;
    const path = join(BUNDLE_CACHE, script);
    return existsSync(path) && sourcesFingerprint(files) === fingerprint ? path : undefined;
  } catch {
    return undefined; // none kept, unreadable, or a source gone
  }
}

/** Writes `text` whole under another name, then renames it: a process reading meanwhile sees the old file or the new. */
function writeWhole(path: string, text: string): void {
  const partial = `${path}.${process.pid}.partial`;
  writeFileSync(partial, text);
  renameSync(partial, path);
}

/**
 * Bundles `entry` with `options` (one output file; `kind` names the variant, `.mjs` or `.js` its file) into the cache
 * and answers the bundle's path, kept for the next process unless a source changed while esbuild read it.
 */
async function bundleInto(entry: string, kind: string, extension: string, options: BuildOptions): Promise<string> {
  const started = Date.now();
  const result = await build({
    ...options,
    entryPoints: [entry],
    absWorkingDir: root,
    bundle: true,
    // Nothing is written by esbuild; the output's name places the source map's paths relative to the cache folder.
    outfile: join(BUNDLE_CACHE, `bundle${extension}`),
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const script = result.outputFiles.find((file) => !file.path.endsWith('.map'))!.text;
  const map = result.outputFiles.find((file) => file.path.endsWith('.map'))?.text;
  mkdirSync(BUNDLE_CACHE, { recursive: true });
  const name = `${digest(script)}${extension}`;
  const path = join(BUNDLE_CACHE, name);
  if (map !== undefined) writeWhole(`${path}.map`, map);
  writeWhole(path, map === undefined ? script : `${script}\n//# sourceMappingURL=${name}.map\n`);
  try {
    const files = Object.keys(result.metafile.inputs).map((input) => resolve(root, input));
    // A source saved while esbuild read it may not be what the bundle holds: such a bundle is not kept.
    if (files.some((file) => statSync(file).mtimeMs >= started - 1000)) return path;
    const record: KeptBundle = { files, fingerprint: sourcesFingerprint(files), script: name };
    writeWhole(recordPath(entry, kind), JSON.stringify(record));
  } catch {
    /* not kept: the next process bundles again */
  }
  return path;
}

const built = new Map<string, Promise<string>>();

/** The kept or a new bundle of `entry` as `kind` (once per process and kind). */
export function bundled(entry: string, kind: string, extension: string, options: BuildOptions): Promise<string> {
  const key = `${kind}\0${resolve(entry)}`;
  const cached = built.get(key);
  if (cached) return cached;
  const kept = keptScript(entry, kind);
  const path = kept !== undefined ? Promise.resolve(kept) : bundleInto(entry, kind, extension, options);
  built.set(key, path);
  path.catch(() => built.delete(key));
  return path;
}

/**
 * A Node entry of the project (the broker, the simulator) as one ES module: the project's own TypeScript bundled,
 * packages left as imports of node_modules (resolved from the cache folder inside it), with a source map, so that a
 * child process starts without transpiling each module as it loads (`npm run build:broker` builds the same way).
 * Undefined for an entry whose code finds files next to its own modules (`import.meta`): bundled, those would be
 * looked for in the cache.
 */
export async function nodeServiceBundle(entry: string): Promise<string | undefined> {
  const path = await bundled(join(root, entry), 'node', '.mjs', {
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: 'external',
  });
  return readFileSync(path, 'utf8').includes('import.meta') ? undefined : path;
}
