/**
 * Which manager commands are reads and which are writes, per family, for the capability probes: a declared read is
 * sent with harmless arguments and must not be answered "unknown command"; a write (or a restart) is never sent
 * unless the suite runs with `--writes`.
 *
 * The gateway's catalog (shared/catalog/) is the first source: the command of a non-mutating `live` or `livePage`
 * entry, and the read of a `replace` or `patch` entry, is a read; the command of a mutating entry, and the write of a
 * `replace` or `patch` entry, is a write. Commands the catalog does not name (those of hand-written handlers, and the
 * simulator's own reads the suite compares snapshots with) are classified in KEPT below. A command in neither is
 * not probed at all; `capabilities.read-probes` names those it left alone.
 */
import { catalog } from '../../shared/catalog/index.js';
import type { Family } from '../../shared/protocol.js';

/** Commands that restart the trading server: never probed, only `writes.restart` sends one. */
export const RESTART_COMMANDS: ReadonlySet<string> = new Set(['SrvRestart']);

/** The classification of commands the catalog does not name (or names only through hand-written handlers). */
const KEPT: Record<Family, { reads: readonly string[]; writes: readonly string[] }> = {
  PF4: {
    reads: [
      'Ping',
      'ServerTime',
      'DailyReportsRequestEx',
      'GroupSecGroupsGet',
      'GroupSecMarginsGet',
      'MailsRequest',
      'MarginsRequest',
      'NewsBodyGet',
      'NewsRequest',
      'NewsTopicGet',
      'NewsTotal',
      'SymbolInfoRequest',
      'SymbolRequest',
      'SymbolSessionsGet',
      'SymbolsRequest',
      'TickInfoLast',
      'TradeCheckStops',
      'TradesRequest',
      'TradesUserRequest',
      'UserPasswordCheck',
      // Sync sessions and snapshots reserve rows for this connection only; they change no server data.
      'TradesSnapshot',
      'TradesSyncRead',
      'TradesSyncStart',
      'UsersSnapshot',
      'UsersSyncRead',
      'UsersSyncStart',
    ],
    writes: ['AdmTradeRecordModify', 'BackupRestoreOrders', 'TradeTransaction', 'SrvRestart'],
  },
  PF5: {
    reads: [
      'Ping',
      'ServerTime',
      'ChartRequest',
      'DealsRequest',
      'GroupGet',
      'GroupsRequest',
      'OrderGet',
      'OrderGetByGroup',
      'OrderGetByLogins',
      'OrderGetBySymbol',
      'OrderGetByTickets',
      'OrdersRequest',
      'PositionGet',
      'PositionGetByLogins',
      'PositionGetBySymbol',
      'PositionGetByTickets',
      'PositionsRequest',
      'SymbolGet',
      'SymbolsRequest',
      'TickLast',
      'UserAccountGet',
      'UserAccountRequest',
      'UserGet',
      'UserGetByGroup',
      'UserGetByLogins',
      'UsersRequest',
    ],
    writes: ['DealerBalance', 'DealerCancel', 'DealerSend'],
  },
};

export interface Classification {
  reads: ReadonlySet<string>;
  writes: ReadonlySet<string>;
}

function classify(family: Family): Classification {
  const reads = new Set<string>(KEPT[family].reads);
  const writes = new Set<string>(KEPT[family].writes);
  for (const entry of catalog) {
    if (entry.family !== null && entry.family !== family) continue;
    const answer = entry.answer;
    if (!answer) continue;
    if (answer.kind === 'live' || answer.kind === 'livePage') (entry.mutating ? writes : reads).add(answer.command);
    if (answer.kind === 'replace') {
      reads.add(answer.read.command);
      writes.add(answer.write.command);
    }
    if (answer.kind === 'patch') {
      if (answer.read) reads.add(answer.read.command);
      if (answer.write) writes.add(answer.write.command);
      if (answer.native) writes.add(answer.native.command);
    }
  }
  // A command both read and written somewhere counts as a write: it is probed only with --writes.
  for (const command of writes) reads.delete(command);
  return { reads, writes };
}

export const COMMANDS: Record<Family, Classification> = { PF4: classify('PF4'), PF5: classify('PF5') };

/**
 * Arguments a probe sends: `{}` (a command with required arguments refuses them, naming the field) unless `{}`
 * would read a whole list from a large server, where the probe asks for one page of one item.
 */
const PROBE_ARGS: Readonly<Record<string, Record<string, unknown>>> = {
  UsersRequest: { limit: 1 },
  TradesRequest: { limit: 1 },
  OnlineRequest: { limit: 1 },
  PositionsRequest: { limit: 1 },
  OrdersRequest: { limit: 1 },
  DealsRequest: { limit: 1 },
  UsersSnapshot: { limit: 1 },
  TradesSnapshot: { limit: 1 },
  UsersSyncRead: { limit: 1 },
  TradesSyncRead: { limit: 1 },
  UserRecordsRequest: { logins: [] },
  TradeRecordsRequest: { orders: [] },
};

export function probeArgs(command: string): Record<string, unknown> {
  return PROBE_ARGS[command] ?? {};
}
