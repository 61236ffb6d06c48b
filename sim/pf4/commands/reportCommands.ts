/**
 * PF4 report commands: closed-trade reports, daily reports computed from the history (one row per account and
 * server day), the daily-sync snapshot held per manager connection and dropped after a successful read, performance
 * snapshots and the server journal.
 */
import type { CommandRegistry } from '../../world/commandRegistry.js';
import type { ArgReader } from '../../world/args.js';
import { cents, DAY_MS, iso } from '../../world/people.js';
import type { PF4TradeRecord } from '../pf4Records.js';
import type { Pf4World } from '../pf4World.js';
import { INT32_MAX, optionalTime, requiredTime } from './common.js';
import { valueText } from '../../../shared/valueText.js';

const MAX_REPORT_DAYS = 366;
/** 32-bit seconds: the range time arguments of PerformanceRequest and DailySyncStart are converted into. */
const MAX_TIME_MS = 2_147_483_647_000;
const LOG_TYPES = ['Standard', 'Logins', 'Trades', 'Errors', 'Full', 'Updater', 'SendMail', 'Failover'];

export interface DailyRow {
  login: number;
  ctm: string;
  group: string;
  bank: string;
  balancePrev: number;
  balance: number;
  deposit: number;
  credit: number;
  profitClosed: number;
  profit: number;
  equity: number;
  margin: number;
  marginFree: number;
}

export function registerReportCommands(registry: CommandRegistry, world: Pf4World): void {
  const reportArgs = (args: ArgReader, raw: Record<string, unknown>, nameMax: number) => {
    const from = requiredTime(args, raw, 'from');
    const to = requiredTime(args, raw, 'to');
    if (to < from) args.fail('to must not be before from');
    const logins = args.intArray('logins', { min: 1, max: INT32_MAX, maxItems: 100_000 });
    if (logins.length === 0) args.fail('logins must not be empty');
    args.optionalString('name', { max: nameMax });
    return { from, to, logins: logins.filter((l) => world.users.has(l)) };
  };

  registry.on('ReportsRequest', (args, _ctx, raw) => {
    const { from, to, logins } = reportArgs(args, raw, 32);
    return logins.flatMap((login) =>
      world.engine
        .history(login, from, to)
        .filter((r) => r.tradeCommand !== 'Balance' && r.tradeCommand !== 'Credit' && r.tradeRecordState !== 'Deleted'),
    );
  });

  registry.on('DailyReportsRequest', (args, _ctx, raw) => {
    const { from, to, logins } = reportArgs(args, raw, 31);
    if ((to - from) / DAY_MS > MAX_REPORT_DAYS) args.fail(`the window must be at most ${MAX_REPORT_DAYS} days`);
    return logins.flatMap((login) => dailyRows(world, login, from, to));
  });

  registry.on('DailyReportsRequestEx', (args, _ctx, raw) => {
    const { from, to, logins } = reportArgs(args, raw, 31);
    if ((to - from) / DAY_MS > MAX_REPORT_DAYS) args.fail(`the window must be at most ${MAX_REPORT_DAYS} days`);
    return Object.fromEntries(logins.map((login) => [String(login), dailyRows(world, login, from, to)]));
  });

  registry.on('DailySyncStart', (args, ctx) => {
    const timestamp = args.int('timestamp', { min: 0, max: INT32_MAX }) * 1000;
    // The reserved records are the rows of the last completed server day, for every account.
    const day = Math.floor(Date.now() / DAY_MS) * DAY_MS - DAY_MS;
    const rows =
      timestamp > day + DAY_MS ? [] : world.users.keys().flatMap((login) => dailyRows(world, login, day, day));
    ctx.session.set('dailySync', rows);
    return true;
  });

  registry.on('DailySyncRead', (_args, ctx) => {
    const rows = (ctx.session.get('dailySync') as DailyRow[] | undefined) ?? [];
    ctx.session.delete('dailySync');
    return rows;
  });

  registry.on('PerformanceRequest', (args, _ctx, raw) => {
    const from = optionalTime(args, raw, 'from') ?? 0;
    if (from < 0 || from > MAX_TIME_MS) args.fail('from must be between 1970 and 2038');
    return world.services.performance.filter((p) => Date.parse(p.ctm) >= from);
  });

  registry.on('JournalRequest', (args, _ctx, raw) => {
    const from = requiredTime(args, raw, 'from');
    const to = optionalTime(args, raw, 'to') ?? Date.now();
    const modeRaw = raw.mode ?? 'Full';
    const mode = typeof modeRaw === 'number' ? LOG_TYPES[modeRaw] : valueText(modeRaw);
    if (!LOG_TYPES.includes(mode)) args.fail(`mode must be one of ${LOG_TYPES.join(', ')}`);
    const filter = args.optionalString('filter', { max: 256 })?.toLowerCase();
    return world.journalEntries().filter((line) => {
      const t = Date.parse(line.time);
      return (
        t >= from &&
        t <= to &&
        (mode === 'Full' || line.code === mode) &&
        (filter === undefined || line.message.toLowerCase().includes(filter))
      );
    });
  });
}

/** One row per server day in [from, to] for an account, replayed from its history; today includes floating. */
export function dailyRows(world: Pf4World, login: number, from: number, to: number): DailyRow[] {
  const user = world.users.get(login);
  if (!user) return [];
  const history = world.engine.history(login);
  const at = (r: PF4TradeRecord) => Date.parse(r.closeTime ?? r.openTime);
  const firstDay = Math.floor(from / DAY_MS) * DAY_MS;
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  let balance = 0;
  let credit = 0;
  let i = 0;
  for (; i < history.length && at(history[i]) < firstDay; i++) apply(history[i]);
  const rows: DailyRow[] = [];
  for (let day = firstDay; day <= to; day += DAY_MS) {
    const balancePrev = balance;
    let deposit = 0;
    let profitClosed = 0;
    for (; i < history.length && at(history[i]) < day + DAY_MS; i++) {
      const r = history[i];
      if (r.tradeCommand === 'Balance') deposit += r.profit;
      else if (r.tradeCommand !== 'Credit' && r.tradeRecordState !== 'Deleted')
        profitClosed += r.profit + r.commission + r.storage;
      apply(r);
    }
    const live = day === today ? world.engine.marginLevel(login) : undefined;
    const equity = live ? live.equity : cents(balance + credit);
    rows.push({
      login,
      ctm: iso(day),
      group: user.group,
      bank: '',
      balancePrev: cents(balancePrev),
      balance: cents(balance),
      deposit: cents(deposit),
      credit: cents(credit),
      profitClosed: cents(profitClosed),
      profit: live ? cents(live.equity - live.balance - user.credit) : 0,
      equity,
      margin: live?.margin ?? 0,
      marginFree: live ? live.free : equity,
    });
  }
  return rows;

  function apply(r: PF4TradeRecord): void {
    if (r.tradeCommand === 'Credit') credit += r.profit;
    else if (r.tradeRecordState !== 'Deleted') balance += r.profit + r.commission + r.storage + r.taxes;
  }
}
