import { afterEach, describe, expect, it, vi } from 'vitest';
import { catalog } from '../../../shared/catalog/index.js';
import type { Binding } from './bind.js';
import { commonBindings } from './common.js';
import { customHandlers } from './index.js';
import { pf4BackupBindings } from './pf4Backup.js';
import { pf4BatchReadsBindings } from './pf4BatchReads.js';
import { pf4MailBindings } from './pf4Mail.js';
import { pf4NewsBindings } from './pf4News.js';
import { pf4ReportsBindings } from './pf4Reports.js';
import { pf4ServerAdminBindings } from './pf4ServerAdmin.js';
import { pf4SymbolsBindings } from './pf4Symbols.js';
import { pf4TradesBindings } from './pf4Trades.js';
import { pf4UsersBindings } from './pf4Users.js';
import { v1Pf4Bindings } from './v1Pf4.js';
import { v1Pf5Bindings } from './v1Pf5.js';

const lists: Record<string, readonly Binding[]> = {
  commonBindings,
  pf4BackupBindings,
  pf4BatchReadsBindings,
  pf4MailBindings,
  pf4NewsBindings,
  pf4ReportsBindings,
  pf4ServerAdminBindings,
  pf4SymbolsBindings,
  pf4TradesBindings,
  pf4UsersBindings,
  v1Pf4Bindings,
  v1Pf5Bindings,
};

afterEach(() => {
  vi.doUnmock('./v1Pf5.js');
  vi.doUnmock('./pf4Users.js');
  vi.resetModules();
});

describe('custom handlers', () => {
  it('hold every binding of every list, by op, as the very handler bound', () => {
    let count = 0;
    for (const [name, list] of Object.entries(lists)) {
      for (const [op, run] of list) {
        expect(customHandlers.get(op), `${name} ${op}`).toBe(run);
        count++;
      }
    }
    expect(count).toBe(37);
    expect(customHandlers.size).toBe(37);
  });

  it('are exactly the ops the catalog declares custom', () => {
    const declared = [...new Set(catalog.filter((e) => e.answer?.kind === 'custom').map((e) => e.op))].sort();
    expect([...customHandlers.keys()].sort()).toEqual(declared);
  });

  it('refuse an op bound twice, naming it', async () => {
    const { commonBindings: common } = await import('./common.js');
    const { v1Pf5Bindings: v1 } = await import('./v1Pf5.js');
    vi.resetModules();
    vi.doMock('./v1Pf5.js', () => ({ v1Pf5Bindings: [...v1, common[0]] }));
    await expect(import('./index.js')).rejects.toThrow(new Error('handler Ping bound twice'));
  });

  it('refuse an op bound twice within one list too', async () => {
    const { pf4UsersBindings: users } = await import('./pf4Users.js');
    vi.resetModules();
    vi.doMock('./pf4Users.js', () => ({ pf4UsersBindings: [...users, users[0]] }));
    await expect(import('./index.js')).rejects.toThrow(new Error('handler PF4.UserPasswordCheck bound twice'));
  });
});
