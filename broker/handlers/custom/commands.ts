/**
 * What each hand-written broker handler (`broker/handlers/custom/`) asks of the trading server: every manager command
 * it may send and every cache table it may read. A custom handler is code, so this is listed by hand, beside the
 * handlers. The broker refuses an operation up front when the trading server's login did not declare one of its
 * commands, or the event kind that fills one of its tables (`broker/handlers/needs.ts`), so a handler never sends its
 * first command and then fails on a later one; the operations tables of docs/manager-protocol.md are generated from it
 * (`scripts/gen-protocol-docs.ts`). `scripts/gen-protocol-docs.test.ts` fails when a custom operation is missing here,
 * when one listed here is no longer custom, when a listed command is not named in the handlers' source, and when the
 * simulator does not answer it; the registry refuses to build a custom handler that is not listed.
 */
import { MAILS_PER_REQUEST } from './pf4Mail.js';
import { SYNC_ROWS_PER_COMMAND } from './pf4BatchReads.js';

export interface CustomUse {
  /** Manager commands the handler may send, in the order it sends them (those sent only sometimes too). */
  commands?: readonly string[];
  /** Pumping-cache tables it answers from (fed by the snapshot and the change events). */
  cache?: readonly string[];
  /** When a command is sent only sometimes, or more than once: one short sentence. */
  note?: string;
}

const rows = SYNC_ROWS_PER_COMMAND.toLocaleString('en-US');

/** By broker handler name (`entry.op` of the catalog). */
export const CUSTOM_HANDLER_COMMANDS: Readonly<Record<string, CustomUse>> = {
  Ping: { commands: ['Ping'] },
  'PF4.AdmTradeRecordModify': { commands: ['AdmTradeRecordModify'] },
  'PF4.BackupRestoreOrders': {
    commands: ['BackupRestoreOrders'],
    note: 'answer: one result per input, in input order',
  },
  'PF4.DailyReportsRequestEx': { commands: ['DailyReportsRequestEx'] },
  'PF4.MailsRequest': {
    commands: ['MailsRequest'],
    note: `\`{limit ≤ ${MAILS_PER_REQUEST}, before?}\` per command, repeated until the page is full`,
  },
  'PF4.NewsBodyGet': { cache: ['news', 'newsBodies'] },
  'PF4.NewsTopicGet': { cache: ['news'] },
  'PF4.NewsTotal': { cache: ['news'] },
  'PF4.SrvRestart': {
    commands: ['SrvRestart'],
    note: 'the broker drops its connection after the answer and logs in again',
  },
  'PF4.SymbolInfoUpdated': { cache: ['symbolInfo'] },
  'PF4.SymbolsGroupsGet': { cache: ['symbolGroups'] },
  'PF4.TradeCheckStops': { commands: ['TradeCheckStops'] },
  'PF4.TradeTransaction': {
    commands: ['TradeRecordRequest', 'TradeTransaction'],
    note: '`TradeRecordRequest` first only for a transaction on a ticket that names its kind or its account',
  },
  'PF4.TradesGetByLogin': { cache: ['users', 'trades'] },
  'PF4.TradesRequest': {
    commands: ['TradesRequest', 'GroupRecordRequest', 'UserRecordsRequest'],
    note: 'with `group`: `GroupRecordRequest`, then `TradesRequest` and `UserRecordsRequest` chunk by chunk',
  },
  'PF4.TradesSnapshot': { commands: ['TradesSnapshot'] },
  'PF4.TradesSyncRead': {
    commands: ['TradesSyncRead'],
    note: `on the connection that answered \`TradesSyncStart\`; at most ${rows} rows per command`,
  },
  'PF4.TradesSyncStart': { commands: ['TradesSyncStart'] },
  'PF4.UserPasswordCheck': { commands: ['UserPasswordCheck'] },
  'PF4.UsersSnapshot': { commands: ['UsersSnapshot'] },
  'PF4.UsersSyncRead': {
    commands: ['UsersSyncRead'],
    note: `on the connection that answered \`UsersSyncStart\`; at most ${rows} rows per command`,
  },
  'PF4.UsersSyncStart': { commands: ['UsersSyncStart'] },
  'PF4.v1.AdmTradeRecordModify': {
    commands: ['TradeRecordRequest', 'AdmTradeRecordModify'],
    note: '`TradeRecordRequest` first only when the body names `login`',
  },
  'PF4.v1.ManagerCommon': { commands: ['ManagerCommon'] },
  'PF4.v1.ManagerCommonEx': { commands: ['CfgRequestCommon'] },
  'PF4.v1.SymbolsGetAll': { cache: ['symbols'] },
  'PF5.ChartRequest': { commands: ['ChartRequest'] },
  'PF5.OrderGetByGroup': { cache: ['orders', 'users'] },
  'PF5.OrderGetByLogins': { cache: ['orders'] },
  'PF5.OrderGetBySymbol': { cache: ['orders', 'users'] },
  'PF5.OrderGetByTickets': { cache: ['orders'] },
  'PF5.PositionGetByLogins': { cache: ['positions'] },
  'PF5.PositionGetBySymbol': { cache: ['positions', 'users'] },
  'PF5.PositionGetByTickets': { cache: ['positions'] },
  'PF5.UserAccountGet': { commands: ['UserAccountGet'] },
  'PF5.UserAccountRequest': { commands: ['UserAccountRequest'] },
  'PF5.UserGetByLogins': { cache: ['users'] },
};
