/**
 * `npm run test:mutation` (scripts/mutation.ts): mutation testing of the core with StrykerJS (stryker.config.json,
 * the tests of vitest.mutation.config.ts), then the mutation score of each core folder.
 *
 *   npm run test:mutation                       every core folder
 *   npm run test:mutation -- broker/cache sim   only these core folders (a prefix picks every folder under it)
 *   npm run test:mutation -- shared/catalog:v1  one part of a folder run in parts (PARTS)
 *   npm run test:mutation -- --scores           print the scores of the last runs again, run nothing
 *
 * Each folder is its own run, with only the tests that can reach it, and is incremental
 * (reports/mutation/<folder>.incremental.json): a mutant whose code and covering tests did not change keeps its last
 * result, so a re-run after a small change tests only what the change touched. Everything under reports/ is produced
 * on the machine that ran it and never committed: a fresh clone starts with no results, and `--scores` shows `-` for
 * a folder not run there yet.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const config = JSON.parse(readFileSync(join(root, 'stryker.config.json'), 'utf8')) as {
  mutate: string[];
  reporters: string[];
};

/** The core folders, as the mutate list names them (a glob per folder, or one file per trading engine). */
export const CORE = [
  'workers/auth',
  'workers/api',
  'workers/gateway',
  'workers/registry',
  'broker/cache',
  'broker/link',
  'broker/session',
  'broker/handlers',
  'shared/catalog',
  'sim/engines',
] as const;

/**
 * The folder a mutated file is scored under: the trading engines of both families (PF4's with its parts in
 * `sim/pf4/trading/`) count as one, `sim/engines`.
 */
export function folderOf(file: string): string | undefined {
  if (file === 'sim/pf4/tradingEngine.ts' || file.startsWith('sim/pf4/trading/') || file === 'sim/pf5/pf5Engine.ts')
    return 'sim/engines';
  return CORE.find((f) => file.startsWith(`${f}/`));
}

interface Mutant {
  status: string;
}
interface Report {
  files: Record<string, { mutants: Mutant[] }>;
}
export interface FolderScore {
  folder: string;
  killed: number;
  survived: number;
  noCoverage: number;
  timeout: number;
  ignored: number;
  score: number | null;
}

/** Mutation score per core folder: detected / (detected + undetected); compile errors and ignored mutants excluded. */
export function scores(r: Report): FolderScore[] {
  const by = new Map<string, FolderScore>(
    CORE.map((folder) => [
      folder,
      { folder, killed: 0, survived: 0, noCoverage: 0, timeout: 0, ignored: 0, score: null },
    ]),
  );
  for (const [path, file] of Object.entries(r.files)) {
    const folder = folderOf(path.startsWith(root) ? path.slice(root.length + 1) : path);
    if (!folder) continue;
    const s = by.get(folder)!;
    for (const m of file.mutants) {
      if (m.status === 'Killed') s.killed++;
      else if (m.status === 'Timeout') s.timeout++;
      else if (m.status === 'Survived') s.survived++;
      else if (m.status === 'NoCoverage') s.noCoverage++;
      else if (m.status === 'Ignored') s.ignored++;
    }
  }
  for (const s of by.values()) {
    const detected = s.killed + s.timeout;
    const total = detected + s.survived + s.noCoverage;
    s.score = total === 0 ? null : Math.round((detected / total) * 10_000) / 100;
  }
  return [...by.values()];
}

function print(list: FolderScore[]): void {
  const pad = (v: unknown, n: number) => String(v).padStart(n);
  console.log(
    `${'folder'.padEnd(18)}${pad('score %', 9)}${pad('killed', 8)}${pad('timeout', 9)}${pad('survived', 10)}${pad('no cov', 8)}`,
  );
  for (const s of list) {
    console.log(
      `${s.folder.padEnd(18)}${pad(s.score ?? '-', 9)}${pad(s.killed, 8)}${pad(s.timeout, 9)}${pad(s.survived, 10)}${pad(s.noCoverage, 8)}`,
    );
  }
}

/** The mutate globs of a core folder, from stryker.config.json's list. */
function globsOf(folder: string): string[] {
  return config.mutate.filter((g) => !g.startsWith('!') && folderOf(g.replace('/**/*.ts', '/x.ts')) === folder);
}

/**
 * The tests that can kill a folder's mutants (vitest.mutation.config.ts reads them from MUTATION_TESTS), so that each
 * folder's initial run does not run tests that never reach it: a folder's own list where it has one, else its family's.
 */
const EDGE_CALL_TESTS = [
  'shared/**/*.test.ts',
  'workers/**/*.test.ts',
  ...[
    'api',
    'gateway',
    'edgeReplica',
    'idempotencyExpiry',
    'canonicalRequests',
    'timeoutHeader',
    'apiHealth',
    'cors',
    'accessLog',
    'scopes',
  ].map((name) => `test/edge/${name}.test.ts`),
];
const TESTS: Record<string, string[]> = {
  workers: ['test/edge/**/*.test.ts', 'shared/**/*.test.ts', 'workers/**/*.test.ts'],
  broker: ['broker/**/*.test.ts', 'shared/**/*.test.ts'],
  // The API and gateway layers: their unit tests and the edge files that drive calls through them. The edge files
  // about tokens, the registry, its cache time and rate limits (each mutant would restart workerd for them and wait
  // out their clocks) exercise the same call path only as a way in.
  // The handlers answer the catalog's operations: the v1 and v2 end-to-end files call every one of them, with the
  // broker in this process (ENV below) so its code is watched; the simulator and the edge stay where they run.
  'broker/handlers': ['broker/**/*.test.ts', 'shared/**/*.test.ts', 'test/e2e/v1/*.test.ts', 'test/e2e/v2/*.test.ts'],
  'workers/api': EDGE_CALL_TESTS,
  // The link objects also follow a platform moved to another broker (the routing file waits out one cache time); the
  // ledger and the link objects are also driven directly, beside stand-ins, on a clock the test moves.
  'workers/gateway': [
    ...EDGE_CALL_TESTS,
    ...['registryRouting', 'idempotencyLedger', 'idempotencyBounds', 'platformLink'].map(
      (name) => `test/edge/${name}.test.ts`,
    ),
  ],
  // Nearly every catalog mutant is evaluated when the catalog is imported, so every test file that imports it covers
  // every such mutant and runs for each. The tests that hold the catalog to the spec and the contract (names, paths,
  // parameters, bounds, answers, scopes, the published document, the input rules) decide them; the handler and edge
  // tests would add minutes per mutant and only reach the same tables again.
  'shared/catalog': [
    'shared/catalog/**/*.test.ts',
    'workers/openapi/document.test.ts',
    'broker/handlers/registry.test.ts',
  ],
  // The engines run in the in-process world tests (the harness calls commands as a manager session does); the socket
  // tests (faults, protocol, slow consumer) reach the same engine code through a server and decide nothing more.
  'sim/engines': ['sim/pf4/**/*.test.ts', 'sim/pf5/**/*.test.ts', 'sim/world.test.ts', 'sim/rights.test.ts'],
};
/**
 * A part's own list where its mutants are decided by fewer files than its folder's: the v1 entries are held to the
 * spec by the catalog-wide tests and the v1 rule files, and the v2 rule files never call a v1 entry.
 */
const CATALOG_WIDE = [
  'shared/catalog/index.coverage.test.ts',
  'shared/catalog/index.test.ts',
  'shared/catalog/registry.test.ts',
];
const V2_PF4_TESTS = [
  ...CATALOG_WIDE,
  'workers/openapi/document.test.ts',
  'shared/catalog/inputs.calls.test.ts',
  'shared/catalog/inputs.text.test.ts',
  'broker/handlers/registry.test.ts',
];
/** The v2 PF4 rule files of a part: the ones named after its own catalog files (and the shared fields' file). */
const v2Pf4Rules = (names: string[]) => names.map((name) => `shared/catalog/v2/pf4/${name}.test.ts`);
export const PART_TESTS: Record<string, string[]> = {
  'shared/catalog:v1': [...CATALOG_WIDE, 'shared/catalog/v1/*.test.ts'],
  'shared/catalog:v2-pf4-accounts': [
    ...V2_PF4_TESTS,
    ...v2Pf4Rules(['common', 'groups', 'history', 'mail', 'margins', 'online', 'plugins', 'trades', 'users']),
  ],
  'shared/catalog:v2-pf4-server': [
    ...V2_PF4_TESTS,
    ...v2Pf4Rules(['common', 'backup', 'config', 'news', 'prices', 'reports', 'serverAdmin', 'symbols']),
  ],
};
const testsOf = (unit: Unit) => PART_TESTS[unit.part ?? ''] ?? TESTS[unit.folder] ?? TESTS[unit.folder.split('/')[0]];
/** Extra environment of a folder's run. */
const ENV: Record<string, Record<string, string>> = {
  'broker/handlers': { STACK_BROKER_IN_PROCESS: '1' },
};

/**
 * Folders too big for one run to end within a working session are run in parts (`shared/catalog:v1`), each with its
 * own incremental file; a folder's score adds its parts' results up.
 */
export const PARTS: Record<string, Record<string, string[]>> = {
  'shared/catalog': {
    v1: ['shared/catalog/v1/**/*.ts'],
    // The v2 PF4 entries in two halves of about 650 lines each: accounts and trading, and the server's own tables.
    'v2-pf4-accounts': [
      'common',
      'groups',
      'history',
      'index',
      'mail',
      'margins',
      'online',
      'plugins',
      'trades',
      'users',
    ].map((name) => `shared/catalog/v2/pf4/${name}.ts`),
    'v2-pf4-server': ['backup', 'config', 'news', 'prices', 'reports', 'serverAdmin', 'symbols'].map(
      (name) => `shared/catalog/v2/pf4/${name}.ts`,
    ),
    builders: ['shared/catalog/*.ts', 'shared/catalog/v2/*.ts'],
  },
  'broker/handlers': {
    generic: ['broker/handlers/*.ts'],
    custom: ['broker/handlers/custom/**/*.ts'],
  },
};

/** One Stryker run: a whole folder, or one part of a folder that has parts. */
interface Unit {
  folder: string;
  name: string;
  globs: string[];
  part?: string;
}
export function unitsOf(folder: string, part?: string): Unit[] {
  const parts = PARTS[folder];
  if (!parts) return [{ folder, name: slug(folder), globs: globsOf(folder) }];
  return Object.entries(parts)
    .filter(([name]) => part === undefined || name === part)
    .map(([name, globs]) => ({ folder, name: `${slug(folder)}.${name}`, globs, part: `${folder}:${name}` }));
}

function slug(folder: string): string {
  return folder.replace(/\//g, '-');
}
/** A unit's last results: the incremental file, which holds every mutant's status from its last run. */
const reportOf = (unit: Unit) => join(root, 'reports', 'mutation', `${unit.name}.incremental.json`);

function runUnit(unit: Unit): void {
  const { folder, name } = unit;
  const dir = join(root, 'reports', 'mutation');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `.stryker-${name}.json`);
  writeFileSync(
    file,
    JSON.stringify(
      {
        ...config,
        // The unit's files, less what the config excludes everywhere (test files and their helpers).
        mutate: [...unit.globs, ...config.mutate.filter((g) => g.startsWith('!'))],
        incrementalFile: `reports/mutation/${name}.incremental.json`,
        // A sandbox folder per run, so runs of different folders or parts can go on at once.
        tempDirName: `.stryker-tmp-${name}`,
        htmlReporter: { fileName: `reports/mutation/${name}.html` },
        plugins: ['@stryker-mutator/*', join(root, 'test', 'mutation', 'mutationSurvivors.mjs')],
        // The initial run of every test the folder's list names, on a loaded 2-core machine (end-to-end files included).
        dryRunTimeoutMinutes: 40,
        reporters: [...config.reporters, 'survivors'],
      },
      null,
      2,
    ),
  );
  const survivors = join(dir, `${name}.survivors.txt`);
  writeFileSync(survivors, '');
  const stryker = join(root, 'node_modules', '@stryker-mutator', 'core', 'bin', 'stryker.js');
  console.error(`mutation testing ${name}`);
  const run = spawnSync(process.execPath, [stryker, 'run', file], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, MUTATION_TESTS: testsOf(unit).join(','), MUTATION_SURVIVORS: survivors, ...ENV[folder] },
  });
  if (run.status !== 0) process.exit(run.status ?? 1);
}

/** The command (scripts/mutation.ts): run the folders or parts named in `args` (all by default), then print the scores. */
export function main(args: string[]): void {
  const asked = args.filter((a) => !a.startsWith('--')).map((a) => a.split(':'));
  const units =
    asked.length === 0
      ? CORE.flatMap((f) => unitsOf(f))
      : CORE.flatMap((f) =>
          asked.filter(([a]) => f.startsWith(a) || a.startsWith(f)).flatMap(([, part]) => unitsOf(f, part)),
        );
  if (units.length === 0) {
    const parts = Object.entries(PARTS).flatMap(([f, p]) => Object.keys(p).map((name) => `${f}:${name}`));
    console.error(
      `no core folder or part under ${args.join(', ')}; core folders: ${CORE.join(', ')}; parts: ${parts.join(', ')}`,
    );
    process.exit(2);
  }
  if (!args.includes('--scores')) for (const unit of units) runUnit(unit);
  const list: FolderScore[] = [];
  for (const folder of CORE) {
    // A folder's score: every part's last results together; a part without a run yet leaves the folder incomplete.
    const reports = unitsOf(folder).map(reportOf);
    const found = reports.every((path) => existsSync(path))
      ? scores({
          files: Object.assign({}, ...reports.map((path) => (JSON.parse(readFileSync(path, 'utf8')) as Report).files)),
        }).find((s) => s.folder === folder)
      : undefined;
    list.push(found ?? { folder, killed: 0, survived: 0, noCoverage: 0, timeout: 0, ignored: 0, score: null });
  }
  print(list);
}
