/**
 * PF4 service commands: news, mail, online accounts, backup files and restores, the users and trades sync sessions
 * (held per manager connection), notifications, licences, feeders and the plugin command channel.
 */
import * as contract from '../../../shared/records/contract.js';
import type { CommandRegistry } from '../../world/commandRegistry.js';
import { readPaging, type ArgReader } from '../../world/args.js';
import { cents, iso } from '../../world/people.js';
import { CommandError } from '../../world/commandError.js';
import { isPending, type PF4Command, type PF4TradeRecord, type PF4UserRecord } from '../pf4Records.js';
import type { Pf4World } from '../pf4World.js';
import { NO_ACCOUNT_SECRETS, passwordHash } from '../serverOnlyFields.js';
import { MAILS_KEPT as MAILS_PAGE_MAX, topicOf } from '../serverServices.js';
import { matchesMask } from '../../world/mask.js';
import { binaryDataProblem } from '../../../shared/plugins.js';
import { MESSAGE_BODY_MAX, NEWS_CATEGORY_MAX, NEWS_TOPIC_MAX } from '../../../shared/catalog/v2/pf4/news.js';
import { MAIL_LOGINS_MAX, MAIL_SENDER_MAX, MAIL_SUBJECT_MAX } from '../../../shared/catalog/v2/pf4/mail.js';
import { answeringPlugin, runBinaryCommand } from '../pluginChannel.js';
import { INT32_MAX, bad, notFound, parseRecord } from './common.js';

const LICENSES = new Set(['Manager', 'API', 'Gateway', 'Backup', 'DataCenter']);
const RESTORE_MAX = 10_000;
/** Push notifications carry at most this many characters. */
const NOTIFICATION_MAX = 255;
/** How long the quotes pause while a restarted quote feeder reconnects. */
const FEEDER_RESTART_GAP_MS = 200;
/** The batch reads (snapshots and sync-session reads): the contract's default `limit`, and the most one read takes. */
const BATCH_DEFAULT = 100_000;
const BATCH_MAX = 1_000_000;

/**
 * The record of a news or mail send and its body apart: a body may be longer than the contract's records' text bound
 * (TEXT_MAX), up to MESSAGE_BODY_MAX characters. Sent news and mail are bounded as the catalog bounds them (news.ts,
 * mail.ts: the server's news and mailbox records), so the edge and the server refuse the same input.
 */
function withBody(args: ArgReader): [Record<string, unknown>, string] {
  const { body, ...record } = args.object('record');
  if (body !== undefined && body !== null && typeof body !== 'string') args.fail('record.body must be a string');
  return [record, text(args, 'record.body', body, MESSAGE_BODY_MAX)];
}

/** A text field of a sent record: absent or null is empty, which a required field refuses; at most `max` characters. */
function text(args: ArgReader, field: string, value: string | null | undefined, max: number, required = false): string {
  const out = value ?? '';
  if (required && out.length === 0) args.fail(`${field} is required`);
  if (out.length > max) args.fail(`${field} must be at most ${max} characters`);
  return out;
}

export function registerServiceCommands(registry: CommandRegistry, world: Pf4World): void {
  const services = world.services;
  const news = (key: number) => services.news.find((n) => n.key === key) ?? notFound(`news ${key}`);

  registry.on('NewsRequest', () => services.news.map(topicOf));
  registry.on('NewsTotal', () => services.news.length);
  registry.on('NewsTopicGet', (args) => {
    const pos = args.int('pos', { min: 0 });
    if (pos >= services.news.length) throw new CommandError(bad, `news position ${pos} is out of range`);
    return topicOf(services.news[pos]);
  });
  registry.on('NewsBodyGet', (args) => news(args.int('key', { min: 0, max: INT32_MAX })).body);
  // The fetch is queued and the body follows on the change stream, where a broker's cache picks it up (NewsBodyGet).
  registry.on('NewsBodyRequest', (args) => {
    const item = news(args.int('key', { min: 0, max: INT32_MAX }));
    world.emit('newsBodies', 'update', { key: item.key, body: item.body });
    return true;
  });
  registry.on('NewsSend', (args) => {
    const [record, body] = withBody(args);
    const request = parseRecord<{ topic?: string | null; category?: string | null; highPriority?: boolean }>(
      contract.PF4NewsSendRequest,
      record,
      'record',
    );
    const topic = text(args, 'record.topic', request.topic, NEWS_TOPIC_MAX, true);
    const category = text(args, 'record.category', request.category, NEWS_CATEGORY_MAX);
    services.addNews({ topic, category, keywords: '', priority: request.highPriority ? 1 : 0, body });
    return true;
  });

  // Every login is checked before any mailbox gets the mail: an unknown one refuses the whole send, naming it.
  registry.on('MailSend', (args) => {
    const [record, body] = withBody(args);
    const request = parseRecord<{
      senderLogin?: number;
      senderName?: string | null;
      subject?: string | null;
      logins?: number[] | null;
    }>(contract.PF4MailSendRequest, record, 'record');
    const senderLogin = request.senderLogin ?? 0;
    if (senderLogin < 0) args.fail('record.senderLogin must be between 0 and 2147483647');
    const senderName = text(args, 'record.senderName', request.senderName, MAIL_SENDER_MAX);
    const subject = text(args, 'record.subject', request.subject, MAIL_SUBJECT_MAX, true);
    const logins = [...new Set(request.logins ?? [])];
    if (logins.length === 0) args.fail('record.logins must not be empty');
    if (logins.length > MAIL_LOGINS_MAX) args.fail(`record.logins must list at most ${MAIL_LOGINS_MAX} logins`);
    for (const login of logins) if (!world.users.has(login)) args.fail(`record.logins: login ${login} not found`);
    services.addMail({ senderLogin, senderName, subject, body, logins });
    return true;
  });
  // The server's kept mails newest first, or one account's mailbox; MailLast is the body of the first of the former.
  // With `limit`, a page: at most that many, each with its key, those before the key `before` when given.
  registry.on('MailsRequest', (args) => {
    const login = args.optionalInt('login', { min: 1, max: INT32_MAX });
    const before = args.optionalInt('before', { min: 1, max: INT32_MAX });
    const limit = args.optionalInt('limit', { min: 1, max: MAILS_PAGE_MAX });
    if (login !== undefined && !world.users.has(login)) notFound(`login ${login}`);
    const mails = login === undefined ? [...services.mails].reverse() : services.mailbox(login);
    if (limit === undefined) {
      if (before !== undefined) args.fail('before needs limit');
      return mails.map(({ logins: _l, key: _k, ...mail }) => mail);
    }
    const after = before === undefined ? mails : mails.filter((mail) => mail.key < before);
    return { items: after.slice(0, limit).map(({ logins: _l, ...mail }) => mail), hasMore: after.length > limit };
  });
  registry.on('MailLast', () => services.mails.at(-1)?.body ?? '');

  registry.on('OnlineRequest', (args) => {
    const { after, limit } = readPaging(args, INT32_MAX);
    const logins = [...services.online].filter((l) => after === undefined || l > after).sort((a, b) => a - b);
    return {
      items: logins.slice(0, limit).map((login) => ({ login, group: world.users.get(login)?.group ?? '' })),
      hasMore: logins.length > limit,
    };
  });

  const backup = (file: string) => services.backups.find((b) => b.file === file) ?? notFound(`backup file ${file}`);
  const backupMode = (mode: unknown) => {
    if (mode === 0 || mode === 'full') return 'full';
    if (mode === 1 || mode === 'archive') return 'archive';
    throw new CommandError(bad, 'mode must be 0 (full) or 1 (archive)');
  };
  const info = (mode: 'full' | 'archive', kind: 'users' | 'trades') =>
    services.backups
      .filter((b) => b.mode === mode)
      .map((b) => ({ file: b.file, size: b[kind].length * (kind === 'users' ? 512 : 256), time: iso(b.time) }));
  registry.on('BackupInfoUsers', (_args, _ctx, raw) => info(backupMode(raw.mode), 'users'));
  registry.on('BackupInfoOrders', (_args, _ctx, raw) => info(backupMode(raw.mode), 'trades'));
  registry.on('BackupRequestUsers', (args) => {
    const file = backup(args.string('file', { max: 256 }));
    const request = args.optionalString('request', { max: 256 });
    const limit = args.optionalInt('limit', { min: 1 }) ?? Number.MAX_SAFE_INTEGER;
    return file.users.filter((u) => request === undefined || matchesMask(u.group, request)).slice(0, limit);
  });
  registry.on('BackupRequestOrders', (args) => {
    const file = backup(args.string('file', { max: 256 }));
    const limit = args.optionalInt('limit', { min: 1 }) ?? Number.MAX_SAFE_INTEGER;
    return file.trades.slice(0, limit).map((row) => world.tradeToWire(row));
  });

  registry.on('BackupRestoreUsers', (args, _ctx, raw) => {
    const inputs = restoreInputs(raw.records, (r, i) =>
      parseRecord<Record<string, unknown>>(contract.PF4UserRestoreInput, r, `records.${i}`),
    );
    for (const [i, input] of inputs.entries()) {
      if (typeof input.login !== 'number' || input.login < 1) args.fail(`records.${i}.login must be positive`);
      if (typeof input.group === 'string' && !world.groups.find(input.group))
        args.fail(`records.${i}.group: group ${input.group} does not exist`);
    }
    for (const input of inputs) restoreUser(world, input);
    world.journal(`${inputs.length} accounts restored from backup`);
    return true;
  });

  registry.on('BackupRestoreOrders', (_args, _ctx, raw) => {
    const inputs = restoreInputs(raw.records, (r, i) =>
      parseRecord<Record<string, unknown>>(contract.PF4TradeRestoreInput, r, `records.${i}`),
    );
    const results = inputs.map((input) => ({
      order: (input.order as number | undefined) ?? 0,
      res: restoreTrade(world, input) ? 1 : 0,
    }));
    world.journal(`${results.filter((r) => r.res === 1).length} of ${results.length} orders restored from backup`);
    return results;
  });

  registry.on('UsersSyncStart', (args, ctx) => {
    const since = args.int('timestamp', { min: 0, max: INT32_MAX }) * 1000;
    ctx.session.set(
      'usersSync',
      world.users.values().filter((u) => world.userChangedAt(u.login) >= since),
    );
    return true;
  });
  const batchLimit = (args: ArgReader) => args.optionalInt('limit', { min: 1, max: BATCH_MAX }) ?? BATCH_DEFAULT;
  registry.on('UsersSyncRead', (args, ctx) => drain(ctx.session, 'usersSync', batchLimit(args)));
  registry.on('UsersSnapshot', (args) => world.users.page(undefined, batchLimit(args)).items);
  registry.on('TradesSyncStart', (args, ctx) => {
    const since = args.int('timestamp', { min: 0, max: INT32_MAX }) * 1000;
    ctx.session.set(
      'tradesSync',
      world.trades
        .values()
        .filter((t) => Date.parse(t.timeStamp) >= since)
        .map((t) => world.tradeToWire(t)),
    );
    return true;
  });
  registry.on('TradesSyncRead', (args, ctx) => drain(ctx.session, 'tradesSync', batchLimit(args)));
  registry.on('TradesSnapshot', (args) =>
    world.trades.page(undefined, batchLimit(args)).items.map((t) => world.tradeToWire(t)),
  );

  registry.on('NotificationsSend', (args) => {
    const request = parseRecord<{ logins?: number[] | null; message?: string | null }>(
      contract.PF4NotificationsSendRequest,
      args.object('record'),
      'record',
    );
    const message = request.message ?? '';
    if (!message) args.fail('record.message is required');
    if (message.length > NOTIFICATION_MAX) args.fail(`record.message must be at most ${NOTIFICATION_MAX} characters`);
    const logins = request.logins ?? [];
    if (logins.length === 0) args.fail('record.logins must not be empty');
    for (const login of logins) if (!world.users.has(login)) args.fail(`record.logins: login ${login} not found`);
    world.journal(`notification to ${logins.length} accounts (${logins.join(', ')}): ${message}`);
    return true;
  });
  registry.on('LicenseCheck', (args) => LICENSES.has(args.string('licenseName', { max: 64 })));
  registry.on('SrvFeederLog', (args) => {
    const name = args.string('name', { max: 128 });
    if (world.config.lists.Feeder.indexOf(name) < 0) notFound(`feeder ${name}`);
    return `${iso(Date.now())} ${name}: connected\n${iso(Date.now())} ${name}: receiving data`;
  });
  registry.on('SrvLiveUpdateStart', () => {
    const enabled = world.config.lists.LiveUpdate.list().filter((l) => l.enable === 1);
    if (enabled.length === 0) world.journal('LiveUpdate: no enabled configuration to broadcast');
    for (const l of enabled)
      world.journal(`LiveUpdate started: ${String(l.company)} ${String(l.path)} build ${String(l.build)}`);
    return true;
  });
  // Running (enabled) feeders are cycled; while a quote feeder reconnects the quotes pause briefly.
  registry.on('SrvFeedsRestart', () => {
    const running = world.config.lists.Feeder.list().filter((f) => f.enable === 1);
    for (const feeder of running) world.journal(`feeder ${String(feeder.name)} restarted`);
    if (running.some((f) => f.dataFeedMode === 'Quotes' || f.dataFeedMode === 'QuotesNews'))
      world.feed.pause(FEEDER_RESTART_GAP_MS);
    return true;
  });
  registry.on('ExternalCommandJSON', (_args, _ctx, raw) => {
    return { plugin: answeringPlugin(world).name, received: raw.payload ?? null };
  });
  // The bytes travel as base64 both ways; the answering plugin's binary command set is in pluginChannel.ts.
  registry.on('ExternalCommandBinary', (args) => {
    const request = parseRecord<{ data?: string | null }>(
      contract.PF4ExternalCommandBinaryRequest,
      args.object('record'),
      'record',
    );
    const problem = binaryDataProblem(request.data);
    if (problem) args.fail(`record.${problem}`);
    return {
      data: Buffer.from(runBinaryCommand(world, Buffer.from(request.data as string, 'base64'))).toString('base64'),
    };
  });
}

function restoreInputs(
  value: unknown,
  parse: (r: unknown, i: number) => Record<string, unknown>,
): Record<string, unknown>[] {
  if (!Array.isArray(value) || value.length < 1 || value.length > RESTORE_MAX) {
    throw new CommandError(bad, `records must be an array of 1 to ${RESTORE_MAX} records`);
  }
  return value.map(parse);
}

function restoreUser(world: Pf4World, input: Record<string, unknown>): void {
  const login = input.login as number;
  const current = world.users.get(login);
  const now = iso(Date.now());
  const base: PF4UserRecord = current ?? {
    login,
    group: (input.group as string) || 'demo\\forex',
    name: '',
    registrationDate: now,
    lastDate: now,
    externalId: '',
    status: '',
    country: '',
    city: '',
    state: '',
    zipCode: '',
    address: '',
    leadSource: '',
    phone: '',
    email: '',
    comment: '',
    leverage: 100,
    agentAccount: 0,
    lastIP: 0,
    balance: 0,
    credit: 0,
    prevMonthBalance: 0,
    prevBalance: 0,
    prevMonthEquity: 0,
    prevEquity: 0,
    interestRate: 0,
    taxes: 0,
    enableFlags: 1,
    sendReports: 1,
    mqid: 0,
    userColor: -1,
    // The restore record carries no secrets: a new account has the default passwords and no second factor or API data.
    ...(NO_ACCOUNT_SECRETS as Pick<
      PF4UserRecord,
      'password' | 'passwordInvestor' | 'passwordPhone' | 'otpSecret' | 'apiData'
    >),
    password: passwordHash(login, `demo-${login}`),
    passwordInvestor: passwordHash(login, `view-${login}`),
  };
  const next: PF4UserRecord = { ...base };
  for (const field of ['group', 'name', 'email', 'country'] as const)
    if (typeof input[field] === 'string') next[field] = input[field];
  if (typeof input.leverage === 'number') next.leverage = input.leverage;
  if (typeof input.balance === 'number') next.balance = cents(input.balance);
  if (typeof input.credit === 'number') next.credit = cents(input.credit);
  if (typeof input.enable === 'number') next.enableFlags = input.enable;
  if (current) world.editUser(next);
  else world.addUser(next);
}

/** Restores one trade: open when it has no close time or price, else into the history. False when it collides. */
function restoreTrade(world: Pf4World, input: Record<string, unknown>): boolean {
  const order = input.order as number | undefined;
  const login = input.login as number | undefined;
  const symbol = input.symbol as string | undefined;
  const command = input.tradeCommand as PF4Command | 'Balance' | 'Credit' | undefined;
  if (!order || order < 1 || !login || !world.users.has(login) || !command) return false;
  if (world.trades.has(order) || world.engine.historyRecord(order)) return false;
  const money = command === 'Balance' || command === 'Credit';
  const instrument = symbol ? world.instrumentBySymbol.get(symbol) : undefined;
  if (!money && !instrument) return false;
  const now = iso(Date.now());
  const row = {
    order,
    login,
    symbol: money ? '' : (symbol as string),
    digits: instrument?.digits ?? 0,
    volume: (input.volume as number) ?? 0,
    openPrice: (input.openPrice as number) ?? 0,
    sl: (input.sl as number) ?? 0,
    tp: (input.tp as number) ?? 0,
    openTime: (input.openTime as string) ?? now,
    commission: (input.commission as number) ?? 0,
    storage: (input.storage as number) ?? 0,
    magic: (input.magic as number) ?? 0,
    comment: (input.comment as string) ?? '',
    tradeRecordReason: 'Dealer' as const,
    timeStamp: now,
  };
  const open = !money && !input.closeTime && !input.closePrice;
  if (open) {
    world.engine.restoreOpen({
      ...row,
      tradeCommand: command,
      state: 'OpenRestored',
      ...(isPending(command) && typeof input.expiration === 'string' ? { expiration: input.expiration } : {}),
    });
    return true;
  }
  const record: PF4TradeRecord = {
    ...row,
    tradeCommand: command,
    volumeLots: row.volume / 100,
    closeTime: (input.closeTime as string) ?? now,
    closePrice: (input.closePrice as number) ?? 0,
    commissionAgent: 0,
    profit: (input.profit as number) ?? 0,
    taxes: 0,
    tradeRecordState: 'ClosedNormal',
    activationType: 'None',
    marginRate: 1,
  };
  world.engine.addHistory(record);
  return true;
}

function drain(session: Map<string, unknown>, key: string, limit: number): unknown[] {
  const rows = (session.get(key) as unknown[] | undefined) ?? [];
  const taken = rows.splice(0, limit);
  if (rows.length === 0) session.delete(key);
  return taken;
}
