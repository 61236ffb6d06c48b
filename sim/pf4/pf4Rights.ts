/**
 * The PF4 rights table: which manager right each command needs. Commands not listed need only a logged-in manager.
 * Administrator for HistoryCorrect, the Adm* commands, configuration changes and restores; the reports permission
 * for report windows and the automatic-reports permission for daily reports, both of which drop the connection
 * when missing instead of answering, as the spec describes.
 */
import type { CommandNeeds } from '../world/commandRegistry.js';
import { PF4_CONFIG_LISTS, pf4ListChanges } from './pf4Config.js';
import { transactionRight } from './commands/tradeCommands.js';

const admin: CommandNeeds = { right: 'admin' };
const reports: CommandNeeds = { right: 'reports', dropWithoutRight: true };
const dailyReports: CommandNeeds = { right: 'serverReports', dropWithoutRight: true };

/** Commands the protocol layer answers itself rather than the world's registry, that still need a right here. */
export const PF4_SESSION_COMMANDS: ReadonlySet<string> = new Set(['SrvRestart']);

// Only the change commands a list has: a right listed for a command that does not exist would answer NotEnoughRights
// where the server answers "unknown command".
const configChanges = Object.fromEntries(
  PF4_CONFIG_LISTS.flatMap((list) => pf4ListChanges(list).map((change) => [`Cfg${change}${list}`, admin])),
);

export const PF4_RIGHTS: Readonly<Record<string, CommandNeeds>> = {
  ...configChanges,
  HistoryCorrect: admin,
  AdmBalanceCheck: admin,
  AdmBalanceFix: admin,
  AdmTradeRecordModify: admin,
  AdmTradesRequest: admin,
  AdmUsersRequestSafe: admin,
  AdmTradesDelete: admin,
  CfgUpdateCommon: admin,
  CfgUpdateTime: admin,
  CfgUpdateBackup: admin,
  CfgUpdateSymbol: admin,
  CfgDeleteSymbol: admin,
  CfgShiftSymbol: admin,
  CfgShiftGroup: admin,
  CfgUpdatePlugin: admin,
  PluginUpdate: admin,
  SrvRestart: admin,
  SrvChartsSync: admin,
  SrvLiveUpdateStart: admin,
  SrvFeedsRestart: admin,
  BackupRestoreUsers: admin,
  BackupRestoreOrders: admin,
  ChartAdd: { right: 'admin' },
  ChartUpdate: { right: 'admin' },
  ChartDelete: { right: 'admin' },
  ReportsRequest: reports,
  PerformanceRequest: reports,
  DailyReportsRequest: dailyReports,
  DailyReportsRequestEx: dailyReports,
  DailySyncStart: dailyReports,
  DailySyncRead: dailyReports,
  TradeTransaction: { right: transactionRight },
  // Undoing an activation reopens trades and moves balances back: the dealer right of a trade transaction on trades.
  TradeClearRollback: { right: 'trades' },
  UserRecordNew: { right: 'manager' },
  UserRecordUpdate: { right: 'manager' },
  UserPasswordSet: { right: 'manager' },
  UsersGroupOp: { right: 'manager' },
  GroupRecordUpdate: { right: 'admin' },
  SymbolAdd: { right: 'marketWatch' },
  SymbolHide: { right: 'marketWatch' },
  SymbolChange: { right: 'admin' },
  SymbolSendTick: { right: 'marketWatch' },
  JournalRequest: { right: 'logs' },
  NewsSend: { right: 'news' },
  MailSend: { right: 'email' },
  NotificationsSend: { right: 'notifications' },
  OnlineRequest: { right: 'online' },
  ExternalCommandJSON: { right: 'plugins' },
  ExternalCommandBinary: { right: 'plugins' },
  // The reads of a sync session and the snapshots hand over every account or trade, as the starts do.
  UsersSyncStart: admin,
  UsersSyncRead: admin,
  UsersSnapshot: admin,
  TradesSyncStart: admin,
  TradesSyncRead: admin,
  TradesSnapshot: admin,
};
