import { describe, expect, it } from 'vitest';
import { pf4V1 } from '../../../shared/catalog/v1/pf4.js';
import { OperationError } from '../../../shared/errors.js';
import { shapeRecord } from '../../../shared/records/shape.js';
import { PumpCache } from '../../cache/pumpCache.js';
import { v1Pf4Bindings } from './v1Pf4.js';
import {
  cacheOf,
  call,
  expectOperationError,
  failureOf,
  platformOf,
  resync,
  ScriptedSession,
  sent,
} from '../../../test/support/broker/handlers.js';

const SHORT_FIELDS = [
  'name',
  'owner',
  'build',
  'version',
  'timeZone',
  'daylightCorrection',
  'timeZoneReal',
  'minClient',
  'minApi',
  'keepEmails',
  'keepTicks',
];
const FULL_FIELDS = [
  'name',
  'owner',
  'build',
  'version',
  'timeZone',
  'daylightCorrection',
  'timeZoneReal',
  'timeSync',
  'minClient',
  'minApi',
  'keepEmails',
  'keepTicks',
  'antiFlood',
  'floodControl',
];

/** A server answer with wrong types, missing fields and members the records do not have. */
const ANSWER = {
  keepTicks: 30,
  name: 'Demo server',
  owner: 42,
  build: 1.5,
  version: '4',
  timeZone: -5,
  daylightCorrection: 1,
  minClient: 400,
  timeSync: 'pool.ntp.org',
  antiFlood: 1,
  password: 'secret',
  extra: { x: 1 },
};

const common = (entry: typeof pf4V1.ManagerCommon, session: ScriptedSession) =>
  call(v1Pf4Bindings, entry, platformOf('PF4', { session }));

describe('ManagerCommon', () => {
  it('asks the whole section and answers ConCommonShort: its fields in order, typed, none missing, no sensitive ones', async () => {
    const session = new ScriptedSession().answers('ManagerCommon', ANSWER);
    const { data } = await common(pf4V1.ManagerCommon, session);
    expect(data).toEqual({
      name: 'Demo server',
      owner: null,
      build: 0,
      version: 0,
      timeZone: -5,
      daylightCorrection: 1,
      timeZoneReal: 0,
      minClient: 400,
      minApi: 0,
      keepEmails: 0,
      keepTicks: 30,
    });
    expect(Object.keys(data as object)).toEqual(SHORT_FIELDS);
    expect(session.sent).toEqual([sent('ManagerCommon', { full: true })]);
  });

  it('answers every field empty for an empty record', async () => {
    for (const answer of [{}, []]) {
      const { data } = await common(pf4V1.ManagerCommon, new ScriptedSession().answers('ManagerCommon', answer));
      expect(data).toEqual({
        name: null,
        owner: null,
        build: 0,
        version: 0,
        timeZone: 0,
        daylightCorrection: 0,
        timeZoneReal: 0,
        minClient: 0,
        minApi: 0,
        keepEmails: 0,
        keepTicks: 0,
      });
    }
  });

  it('refuses an answer that is not a record', async () => {
    for (const answer of [null, undefined, 0, '', 'common', 7, true]) {
      await expectOperationError(
        () => common(pf4V1.ManagerCommon, new ScriptedSession().answers('ManagerCommon', answer)),
        {
          code: 'Internal',
          message: 'the trading server answered ManagerCommon without a record',
        },
      );
    }
  });
});

describe('ManagerCommonEx', () => {
  it('asks the whole configuration section and answers ConCommon, sensitive settings included', async () => {
    const session = new ScriptedSession().answers('CfgRequestCommon', ANSWER);
    const { data } = await common(pf4V1.ManagerCommonEx, session);
    expect(data).toEqual({
      name: 'Demo server',
      owner: null,
      build: 0,
      version: 0,
      timeZone: -5,
      daylightCorrection: 1,
      timeZoneReal: 0,
      timeSync: 'pool.ntp.org',
      minClient: 400,
      minApi: 0,
      keepEmails: 0,
      keepTicks: 30,
      antiFlood: 1,
      floodControl: 0,
    });
    expect(Object.keys(data as object)).toEqual(FULL_FIELDS);
    expect(session.sent).toEqual([sent('CfgRequestCommon', { full: true })]);
  });

  it('refuses an answer that is not a record, naming the command', async () => {
    await expectOperationError(
      () => common(pf4V1.ManagerCommonEx, new ScriptedSession().answers('CfgRequestCommon', null)),
      {
        code: 'Internal',
        message: 'the trading server answered CfgRequestCommon without a record',
      },
    );
  });

  it('fails as the session failed', async () => {
    const refused = new OperationError('PF4Error', 'not enough rights', 7);
    expect(
      await failureOf(() => common(pf4V1.ManagerCommonEx, new ScriptedSession().fails('CfgRequestCommon', refused))),
    ).toBe(refused);
  });
});

describe('SymbolsGetAll', () => {
  const symbol = (cache: PumpCache, name: string) =>
    call(v1Pf4Bindings, pf4V1.SymbolsGetAll, platformOf('PF4', { cache }), { symbol: name });
  const cache = cacheOf('PF4', {
    symbols: [{ symbol: 'EURUSD', description: 'Euro', digits: 5, spread: 2, contractSize: 100000, internal: 'x' }],
  });

  it("answers an active symbol's configuration from the cache as PF4SymbolConfig", () => {
    const { data } = symbol(cache, 'EURUSD') as { data: Record<string, unknown> };
    expect(data).toEqual({
      ...(shapeRecord('PF4SymbolConfig')({}) as object),
      symbol: 'EURUSD',
      description: 'Euro',
      digits: 5,
      spread: 2,
      contractSize: 100000,
    });
    expect(data).not.toHaveProperty('internal');
    expect(data.valueDate).toBe('1970-01-01T00:00:00Z');
  });

  it('is not found for a symbol the cache does not hold, names compared exactly', async () => {
    for (const name of ['GBPUSD', 'eurusd']) {
      await expectOperationError(() => symbol(cache, name), {
        code: 'NotFound',
        message: `symbol ${name} not found among the active symbols`,
        managerCode: 3,
      });
    }
  });

  it('waits for the first snapshot', async () => {
    const later = new PumpCache('PF4', { clock: () => 0 });
    const pending = symbol(later, 'EURUSD');
    expect(pending).toBeInstanceOf(Promise);
    resync(later, { symbols: [{ symbol: 'EURUSD', digits: 3 }] });
    expect(((await pending).data as Record<string, unknown>).digits).toBe(3);
  });
});

describe('AdmTradeRecordModify', () => {
  const trade = { order: 9, login: 7, symbol: 'EURUSD', tradeCommand: 'Buy', volume: 10, sl: 1.1 };
  const modify = (session: ScriptedSession, body: Record<string, unknown>) =>
    call(v1Pf4Bindings, pf4V1.AdmTradeRecordModify, platformOf('PF4', { session }), { body });

  it('writes the update fields of the record to its ticket, unread when the record names no account', async () => {
    const session = new ScriptedSession().answers('AdmTradeRecordModify', { ...trade, sl: 1.2, password: 'x' });
    expect(await modify(session, { order: 9, sl: 1.2, volume: 99 })).toEqual({
      data: shapeRecord('PF4Trade')({ ...trade, sl: 1.2 }),
    });
    expect(session.sent).toEqual([
      sent('AdmTradeRecordModify', { ticket: 9, record: { order: 9, sl: 1.2 } }, { keyedRead: true }),
    ]);
  });

  it("reads the ticket of a record naming its account: the ticket's own login writes, another is refused sending nothing", async () => {
    const own = new ScriptedSession()
      .answers('TradeRecordRequest', trade)
      .answers('AdmTradeRecordModify', { ...trade, sl: 1.2 });
    expect(await modify(own, { ...trade, sl: 1.2 })).toEqual({ data: shapeRecord('PF4Trade')({ ...trade, sl: 1.2 }) });
    expect(own.sent).toEqual([
      sent('TradeRecordRequest', { order: 9 }, { keyedRead: true }),
      sent('AdmTradeRecordModify', { ticket: 9, record: { order: 9, sl: 1.2 } }, { keyedRead: true }),
    ]);
    const other = new ScriptedSession().answers('TradeRecordRequest', trade);
    await expectOperationError(() => modify(other, { ...trade, login: 8, sl: 1.2 }), {
      code: 'NotFound',
      managerCode: 3,
      message: "body.login: order 9 is not a trade of login 8 (it is login 7's); login must be the ticket's, or absent",
    });
    expect(other.sent).toEqual([sent('TradeRecordRequest', { order: 9 }, { keyedRead: true })]);
  });
});
