/** The score table of `npm run test:mutation` (scripts/mutation.ts): which folder a mutant counts for, and the score. */
import { describe, expect, it } from 'vitest';
import { CORE, folderOf, scores } from '../../scripts/mutation.js';

const mutants = (...statuses: string[]) => statuses.map((status) => ({ status }));

describe('mutation scores', () => {
  it('counts each file under its core folder, both trading engines as sim/engines, and nothing else', () => {
    expect(folderOf('broker/cache/keyedTable.ts')).toBe('broker/cache');
    expect(folderOf('workers/auth/requireToken.ts')).toBe('workers/auth');
    expect(folderOf('shared/catalog/v2/pf4/users.ts')).toBe('shared/catalog');
    expect(folderOf('sim/pf4/tradingEngine.ts')).toBe('sim/engines');
    expect(folderOf('sim/pf5/pf5Engine.ts')).toBe('sim/engines');
    expect(folderOf('sim/pf5/pf5World.ts')).toBeUndefined();
    expect(folderOf('workers/streams/fanout.ts')).toBeUndefined();
    expect(folderOf('broker/cachefoo/x.ts')).toBeUndefined();
  });

  it('scores detected over detected plus undetected, leaving compile errors and ignored mutants out', () => {
    const table = scores({
      files: {
        'broker/cache/keyedTable.ts': { mutants: mutants('Killed', 'Killed', 'Timeout', 'Survived', 'CompileError', 'Ignored') },
        'broker/cache/pumpCache.ts': { mutants: mutants('NoCoverage', 'Killed', 'Killed', 'Killed') },
        'sim/pf4/tradingEngine.ts': { mutants: mutants('Killed') },
        'sim/pf5/pf5Engine.ts': { mutants: mutants('Survived') },
        'sim/pf5/pf5World.ts': { mutants: mutants('Survived', 'Survived') },
      },
    });
    expect(table.map((s) => s.folder)).toEqual([...CORE]);
    expect(table.find((s) => s.folder === 'broker/cache')).toEqual({
      folder: 'broker/cache', killed: 5, timeout: 1, survived: 1, noCoverage: 1, ignored: 1, score: 75,
    });
    expect(table.find((s) => s.folder === 'sim/engines')?.score).toBe(50);
    expect(table.find((s) => s.folder === 'workers/auth')?.score).toBeNull();
  });
});
