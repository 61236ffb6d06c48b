/**
 * The PF4 symbol catalog and group reads: one symbol and one group by name, the quick symbol change that moves
 * spreads, stops level and execution mode, and the catalog refresh that hands the broker every symbol afresh.
 */
import { describe, expect, it } from 'vitest';
import { PF4_RESULT as R } from '../../shared/resultCodes.js';
import * as records from '../../shared/records/contract.js';
import { pf4Harness } from '../../test/support/sim/worldHarness.js';
import { withoutServerOnly } from './serverOnlyFields.js';

type Rec = Record<string, any>;

describe('SymbolRequest', () => {
  it('answers the configuration of one symbol, as the catalog lists it', () => {
    const h = pf4Harness();
    const listed: Rec[] = h.call('SymbolsRequest');
    for (const symbol of listed) expect(h.call('SymbolRequest', { symbol: symbol.symbol })).toEqual(symbol);
    const eurusd = h.call('SymbolRequest', { symbol: 'EURUSD' });
    records.PF4SymbolConfig.parse(eurusd);
    expect(eurusd).toMatchObject({
      symbol: 'EURUSD',
      digits: 5,
      point: 0.00001,
      currency: 'USD',
      marginCurrency: 'EUR',
      tradeMode: 'Full',
    });
  });

  it('answers a hidden symbol, which is still configured, and follows a configuration update', () => {
    const h = pf4Harness();
    h.call('SymbolHide', { symbol: 'GBPUSD' });
    expect(h.call('SymbolRequest', { symbol: 'GBPUSD' }).symbol).toBe('GBPUSD');
    h.call('CfgUpdateSymbol', { symbol: 'GBPUSD', record: { description: 'Cable' } });
    expect(h.call('SymbolRequest', { symbol: 'GBPUSD' }).description).toBe('Cable');
  });

  it('refuses an unknown, deleted, wrongly cased or over-long name', () => {
    const h = pf4Harness();
    expect(h.fails('SymbolRequest', { symbol: 'NOPE' })).toEqual({
      code: R.InvalidData,
      message: 'symbol NOPE not found',
    });
    expect(h.fails('SymbolRequest', { symbol: 'eurusd' }).message).toBe('symbol eurusd not found');
    expect(h.fails('SymbolRequest', { symbol: 'X'.repeat(13) }).message).toBe('symbol must be at most 12 characters');
    expect(h.fails('SymbolRequest', {}).message).toBe('symbol must be a non-empty string');
    const pos = h.call('SymbolsRequest').findIndex((s: Rec) => s.symbol === 'USDJPY');
    h.call('CfgDeleteSymbol', { pos });
    expect(h.fails('SymbolRequest', { symbol: 'USDJPY' }).message).toBe('symbol USDJPY not found');
  });
});

describe('the active set', () => {
  const names = (records: Rec[]) => records.map((s) => s.symbol);

  it('SymbolHide takes a symbol out of SymbolsRequest and the resync with a delete event, SymbolAdd brings it back with an add', () => {
    const h = pf4Harness({ symbols: 4 });
    const configured = names(h.call('CfgRequestSymbol'));
    expect(configured).toEqual(['EURUSD', 'GBPUSD', 'USDJPY', 'USDCHF']);
    const gbpusd = h.call('SymbolRequest', { symbol: 'GBPUSD' });
    const mark = h.events.length;
    expect(h.call('SymbolHide', { symbol: 'GBPUSD' })).toBe(true);
    expect(h.events.slice(mark)).toEqual([{ kind: 'symbols', op: 'delete', record: { symbol: 'GBPUSD' } }]);
    expect(names(h.call('SymbolsRequest'))).toEqual(['EURUSD', 'USDJPY', 'USDCHF']);
    expect(names(h.world.snapshot().find((p) => p.kind === 'symbols')!.rows as Rec[])).toEqual([
      'EURUSD',
      'USDJPY',
      'USDCHF',
    ]);
    expect(h.world.counts().symbols).toBe(3);
    // Still configured: the configuration reads answer it.
    expect(names(h.call('CfgRequestSymbol'))).toEqual(configured);
    expect(h.call('CfgRequestSymbol', { symbol: 'GBPUSD' })).toEqual(gbpusd);
    // Hiding it again announces nothing.
    h.call('SymbolHide', { symbol: 'GBPUSD' });
    expect(h.events.slice(mark)).toHaveLength(1);
    expect(h.call('SymbolAdd', { symbol: 'GBPUSD' })).toBe(true);
    // The add brings the record as it stands, then the symbol's summary whole.
    expect(h.events.slice(mark + 1)).toEqual([
      { kind: 'symbols', op: 'add', record: gbpusd },
      { kind: 'symbolInfo', op: 'update', record: h.call('SymbolInfoRequest', { symbol: 'GBPUSD' }) },
    ]);
    expect(names(h.call('SymbolsRequest'))).toEqual(configured);
    h.call('SymbolAdd', { symbol: 'GBPUSD' });
    expect(h.events.slice(mark)).toHaveLength(3);
    expect(h.fails('SymbolHide', { symbol: 'NOPE' })).toEqual({
      code: R.InvalidData,
      message: 'symbol NOPE not found',
    });
  });

  it('changes a hidden symbol quietly and announces it as it stands when it is added back; a hidden symbol deleted takes only its sessions along', () => {
    const h = pf4Harness({ symbols: 4 });
    h.call('SymbolHide', { symbol: 'USDJPY' });
    const mark = h.events.length;
    h.call('CfgUpdateSymbol', { symbol: 'USDJPY', record: { description: 'Dollar yen' } });
    h.call('SymbolChange', { record: { symbol: 'USDJPY', stopsLevel: 30 } });
    expect(h.events.slice(mark)).toEqual([]);
    h.call('SymbolAdd', { symbol: 'USDJPY' });
    const usdjpy = h.call('SymbolRequest', { symbol: 'USDJPY' });
    expect(usdjpy).toMatchObject({ description: 'Dollar yen', stopsLevel: 30 });
    expect(h.events.slice(mark)).toEqual([
      { kind: 'symbols', op: 'add', record: usdjpy },
      { kind: 'symbolInfo', op: 'update', record: h.call('SymbolInfoRequest', { symbol: 'USDJPY' }) },
    ]);
    h.call('SymbolHide', { symbol: 'USDCHF' });
    const before = h.events.length;
    expect(h.call('CfgDeleteSymbol', { pos: 3 })).toBe(true);
    // Only its sessions, kept for every configured symbol, leave.
    expect(h.events.slice(before)).toEqual([{ kind: 'symbolSessions', op: 'delete', record: { symbol: 'USDCHF' } }]);
    expect(names(h.call('CfgRequestSymbol'))).toEqual(['EURUSD', 'GBPUSD', 'USDJPY']);
    expect(h.world.hiddenSymbols.size).toBe(0);
  });
});

describe('SymbolChange', () => {
  it('sets spread, spread balance, stops level, colour, smoothing and execution mode and announces the symbol', () => {
    const h = pf4Harness();
    const before = h.call('SymbolRequest', { symbol: 'EURUSD' });
    const mark = h.events.length;
    expect(
      h.call('SymbolChange', {
        record: {
          symbol: 'EURUSD',
          spread: 30,
          spreadBalance: -2,
          stopsLevel: 40,
          color: 255,
          smoothing: 3,
          exeMode: 'Market',
        },
      }),
    ).toBe(true);
    const after = h.call('SymbolRequest', { symbol: 'EURUSD' });
    records.PF4SymbolConfig.parse(after);
    expect(after).toEqual({
      ...before,
      spread: 30,
      spreadBalance: -2,
      stopsLevel: 40,
      backgroundColor: 255,
      filterSmoothing: 3,
      symbolExecMode: 'Market',
    });
    expect(h.events.slice(mark)).toEqual([{ kind: 'symbols', op: 'update', record: after }]);
  });

  it('changes only the fields it is given', () => {
    const h = pf4Harness();
    const before = h.call('SymbolRequest', { symbol: 'GBPUSD' });
    h.call('SymbolChange', { record: { symbol: 'GBPUSD', stopsLevel: 0 } });
    expect(h.call('SymbolRequest', { symbol: 'GBPUSD' })).toEqual({ ...before, stopsLevel: 0 });
  });

  it('quotes the new spread from the next tick and checks trades against the new stops level', () => {
    const h = pf4Harness({ symbols: 1 });
    h.call('SymbolChange', { record: { symbol: 'EURUSD', spread: 25 } });
    const quote = h.world.feed.tickOne()!;
    expect(Math.round((quote.ask - quote.bid) * 1e5)).toBe(25);
    h.call('SymbolSendTick', { symbol: 'EURUSD', bid: 1.1, ask: 1.1001 });
    const { login } = h.call('UserRecordNew', { record: { group: 'real\\vip', name: 'Stops', leverage: 100 } });
    h.call('TradeTransaction', {
      tradeTransactionType: 'BrBalance',
      tradeCommand: 'Balance',
      orderBy: login,
      price: 10_000,
    });
    const buy = {
      tradeTransactionType: 'BrOrderOpen',
      orderBy: login,
      symbol: 'EURUSD',
      tradeCommand: 'Buy',
      volume: 10,
      sl: 1.0995,
    };
    h.call('SymbolChange', { record: { symbol: 'EURUSD', stopsLevel: 100 } });
    // 50 points under the bid is inside a 100-point stops level.
    expect(h.fails('TradeTransaction', buy).code).toBe(R.TradeBadStops);
    h.call('SymbolChange', { record: { symbol: 'EURUSD', stopsLevel: 20 } });
    expect(h.call('TradeTransaction', buy).sl).toBe(1.0995);
  });

  it('refuses a change without a known symbol or with a bad field, naming it, and announces nothing', () => {
    const h = pf4Harness();
    const mark = h.events.length;
    expect(h.fails('SymbolChange', { record: { spread: 10 } })).toEqual({
      code: R.InvalidData,
      message: 'record.symbol is required',
    });
    expect(h.fails('SymbolChange', { record: { symbol: 'NOPE', spread: 10 } }).message).toBe('symbol NOPE not found');
    expect(h.fails('SymbolChange', { record: { symbol: 'X'.repeat(13) } }).message).toBe(
      'record.symbol must be at most 12 characters',
    );
    expect(h.fails('SymbolChange', { record: { symbol: 'EURUSD', exeMode: 'Auction' } }).message).toMatch(
      /^record\.exeMode: /,
    );
    expect(h.fails('SymbolChange', { record: { symbol: 'EURUSD', spread: 1.5 } }).message).toMatch(/^record\.spread: /);
    expect(h.fails('SymbolChange', { record: { symbol: 'EURUSD', digits: 3 } }).message).toMatch(/^record\.digits: /);
    expect(h.fails('SymbolChange', { record: { symbol: 'EURUSD', spread: -1 } }).message).toBe(
      'record.spread must be 0 or positive',
    );
    expect(h.fails('SymbolChange', { record: { symbol: 'EURUSD', stopsLevel: -5 } }).message).toBe(
      'record.stopsLevel must be 0 or positive',
    );
    expect(h.fails('SymbolChange', { record: { symbol: 'EURUSD', spread: 10 } }, ['marketWatch']).code).toBe(
      R.NotEnoughRights,
    );
    expect(h.events.slice(mark)).toEqual([]);
  });
});

describe('SymbolsRefresh', () => {
  it('hands the broker every active symbol afresh, in catalog order, a hidden one left out', () => {
    const h = pf4Harness();
    h.call('SymbolHide', { symbol: 'XAUUSD' });
    h.call('CfgShiftSymbol', { pos: 0, shift: 3 });
    const mark = h.events.length;
    expect(h.call('SymbolsRefresh')).toBe(true);
    const catalog = h.call('SymbolsRequest');
    expect(catalog).toHaveLength(11);
    expect(catalog.map((s: Rec) => s.symbol)).toEqual(
      h
        .call('CfgRequestSymbol')
        .map((s: Rec) => s.symbol)
        .filter((s: string) => s !== 'XAUUSD'),
    );
    expect(h.events.slice(mark)).toEqual(catalog.map((record: Rec) => ({ kind: 'symbols', op: 'update', record })));
    expect(h.world.journalEntries().at(-1)?.message).toBe('symbols refreshed: 11');
  });

  it('leaves a deleted symbol out', () => {
    const h = pf4Harness({ symbols: 3 });
    h.call('CfgDeleteSymbol', { pos: 1 });
    const mark = h.events.length;
    h.call('SymbolsRefresh');
    expect(h.events.slice(mark).map((e) => e.record.symbol)).toEqual(['EURUSD', 'USDJPY']);
  });
});

describe('GroupRecordRequest', () => {
  it('answers one group as the group list has it, its margin overrides counted', () => {
    const h = pf4Harness();
    for (const group of h.call('GroupsRequest'))
      expect(h.call('GroupRecordRequest', { group: group.group })).toEqual(group);
    const vip = h.call('GroupRecordRequest', { group: 'real\\vip' });
    records.PF4Group.parse(withoutServerOnly('group', vip));
    expect(vip).toMatchObject({
      group: 'real\\vip',
      defaultLeverage: 200,
      currency: 'USD',
      marginCall: 100,
      marginStopout: 50,
    });
    expect(vip.secMarginsTotal).toBe(h.call('GroupSecMarginsGet', { group: 'real\\vip' }).length);
  });

  it('follows a group update', () => {
    const h = pf4Harness();
    h.call('GroupRecordUpdate', { group: 'demo\\pro', record: { marginCall: 120, company: 'Pro desk' } });
    expect(h.call('GroupRecordRequest', { group: 'demo\\pro' })).toMatchObject({
      marginCall: 120,
      company: 'Pro desk',
    });
  });

  it('refuses an unknown group, a name in another case and a name over 16 characters', () => {
    const h = pf4Harness();
    expect(h.fails('GroupRecordRequest', { group: 'real\\gold' })).toEqual({
      code: R.InvalidData,
      message: 'group real\\gold not found',
    });
    expect(h.fails('GroupRecordRequest', { group: 'Real\\Vip' }).message).toBe('group Real\\Vip not found');
    expect(h.fails('GroupRecordRequest', { group: 'g'.repeat(17) }).message).toBe(
      'group must be at most 16 characters',
    );
    expect(h.fails('GroupRecordRequest', { group: '' }).message).toBe('group must be a non-empty string');
  });
});
