/** The score table of `npm run test:mutation` (test/mutation/mutation.ts): which folder a mutant counts for, and the score. */
import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { CORE, folderOf, PART_TESTS, PARTS, scores, unitsOf } from './mutation.js';

const mutants = (...statuses: string[]) => statuses.map((status) => ({ status }));

describe('mutation scores', () => {
  it('counts each file under its core folder, both trading engines as sim/engines, and nothing else', () => {
    expect(folderOf('broker/cache/keyedTable.ts')).toBe('broker/cache');
    expect(folderOf('workers/auth/requireToken.ts')).toBe('workers/auth');
    expect(folderOf('shared/catalog/v2/pf4/users.ts')).toBe('shared/catalog');
    expect(folderOf('sim/pf4/tradingEngine.ts')).toBe('sim/engines');
    expect(folderOf('sim/pf4/trading/tradeChecks.ts')).toBe('sim/engines');
    expect(folderOf('sim/pf5/pf5Engine.ts')).toBe('sim/engines');
    expect(folderOf('sim/pf5/pf5World.ts')).toBeUndefined();
    expect(folderOf('workers/streams/fanout.ts')).toBeUndefined();
    expect(folderOf('broker/cachefoo/x.ts')).toBeUndefined();
  });

  it('scores detected over detected plus undetected, leaving compile errors and ignored mutants out', () => {
    const table = scores({
      files: {
        'broker/cache/keyedTable.ts': {
          mutants: mutants('Killed', 'Killed', 'Timeout', 'Survived', 'CompileError', 'Ignored'),
        },
        'broker/cache/pumpCache.ts': { mutants: mutants('NoCoverage', 'Killed', 'Killed', 'Killed') },
        'sim/pf4/tradingEngine.ts': { mutants: mutants('Killed') },
        'sim/pf5/pf5Engine.ts': { mutants: mutants('Survived') },
        'sim/pf5/pf5World.ts': { mutants: mutants('Survived', 'Survived') },
      },
    });
    expect(table.map((s) => s.folder)).toEqual([...CORE]);
    expect(table.find((s) => s.folder === 'broker/cache')).toEqual({
      folder: 'broker/cache',
      killed: 5,
      timeout: 1,
      survived: 1,
      noCoverage: 1,
      ignored: 1,
      score: 75,
    });
    expect(table.find((s) => s.folder === 'sim/engines')?.score).toBe(50);
    expect(table.find((s) => s.folder === 'workers/auth')?.score).toBeNull();
  });

  it('runs a folder in parts that together take each of its source files exactly once', () => {
    const root = join(import.meta.dirname, '..', '..');
    const sources = (dir: string): string[] =>
      readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
        e.isDirectory()
          ? sources(join(dir, e.name))
          : e.name.endsWith('.ts') && !e.name.endsWith('.test.ts')
            ? [join(dir, e.name)]
            : [],
      );
    // A part's globs: `<dir>/*.ts` takes the files of that folder only, `<dir>/**/*.ts` those under it too, and a
    // path without `*` that one file.
    const takes = (glob: string, file: string) => {
      if (!glob.includes('*')) return glob === file;
      const deep = glob.endsWith('/**/*.ts');
      const dir = glob.slice(0, glob.length - (deep ? '/**/*.ts' : '/*.ts').length);
      const rest = relative(dir, file);
      return !rest.startsWith('..') && (deep || !rest.includes('/'));
    };
    for (const folder of Object.keys(PARTS)) {
      const units = unitsOf(folder);
      expect(units.map((u) => u.name)).toEqual(
        Object.keys(PARTS[folder]).map((part) => `${folder.replace('/', '-')}.${part}`),
      );
      for (const file of sources(folder)) {
        expect(units.filter((u) => u.globs.some((g) => takes(g, file))).length, file).toBe(1);
      }
    }
    expect(unitsOf('broker/cache')).toEqual([
      { folder: 'broker/cache', name: 'broker-cache', globs: ['broker/cache/**/*.ts'] },
    ]);
    expect(unitsOf('shared/catalog', 'v1').map((u) => u.globs)).toEqual([['shared/catalog/v1/**/*.ts']]);
  });

  it('gives each v2 PF4 rule file to the part whose catalog file it holds to the spec, and lists only files that exist', () => {
    const root = join(import.meta.dirname, '..', '..');
    const rules = readdirSync(join(root, 'shared/catalog/v2/pf4'))
      .filter((name) => name.endsWith('.test.ts'))
      .map((name) => `shared/catalog/v2/pf4/${name}`);
    const lists = ['v2-pf4-accounts', 'v2-pf4-server'].map((part) => PART_TESTS[`shared/catalog:${part}`]);
    for (const file of rules) {
      // The shared fields' rules decide both halves; every other rule file one half.
      expect(lists.filter((list) => list.includes(file)).length, file).toBe(file.endsWith('/common.test.ts') ? 2 : 1);
    }
    for (const list of Object.values(PART_TESTS)) {
      for (const file of list.filter((f) => !f.includes('*'))) expect(existsSync(join(root, file)), file).toBe(true);
    }
  });
});
