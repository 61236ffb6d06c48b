/** Every hand-written handler, by operation name. A name bound twice is a programming error. */
import type { Handler } from '../handler.js';
import type { Binding } from './bind.js';
import { commonBindings } from './common.js';
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

const all: readonly Binding[] = [
  ...commonBindings,
  ...pf4ServerAdminBindings,
  ...pf4ReportsBindings,
  ...pf4BackupBindings,
  ...pf4BatchReadsBindings,
  ...pf4SymbolsBindings,
  ...pf4UsersBindings,
  ...pf4TradesBindings,
  ...pf4NewsBindings,
  ...pf4MailBindings,
  ...v1Pf4Bindings,
  ...v1Pf5Bindings,
];

export const customHandlers: ReadonlyMap<string, Handler> = new Map(
  all.map(([op, run]) => {
    if (all.filter(([o]) => o === op).length > 1) throw new Error(`handler ${op} bound twice`);
    return [op, run];
  }),
);
