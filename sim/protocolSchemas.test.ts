/**
 * The reference server speaks the protocol as its schemas state it: each family's snapshot has the kinds of
 * CHANGE_EVENTS in their order, and every snapshot record and every change event a run of commands raises is valid
 * against its message in the AsyncAPI document (JSON Schema, the contract records included) and against the zod
 * schemas, and its op is one the schemas give its kind.
 */
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  CHANGE_EVENTS,
  changeEventSchema,
  changeKindsOf,
  resyncChunkOf,
  type ChangeOp,
  type Family,
} from '../shared/protocol.js';
import { managerProtocolAsyncApi, messageKey } from '../shared/protocolAsyncApi.js';
import { pf4Harness, pf5Harness, type RecordedEvent } from '../test/support/sim/worldHarness.js';
import type { ChangeOp as SimChangeOp, SnapshotPart } from './world/simWorld.js';

type Json = Record<string, any>;
const doc = managerProtocolAsyncApi();
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);
for (const format of ['int32', 'int64', 'double', 'byte']) ajv.addFormat(format, true);
ajv.addSchema({ components: doc.components }, 'asyncapi');

/** The errors of `frame` against the payload of the document's message `key`, or [] when it is valid. */
function payloadErrors(key: string, frame: unknown): string[] {
  const validate = ajv.getSchema(`asyncapi#/components/messages/${key}/payload`)!;
  return validate(frame) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

/** Checks every recorded event; answers the kinds and op groups seen. */
function checkEvents(family: Family, events: readonly RecordedEvent[]): Set<string> {
  const seen = new Set<string>();
  for (const { kind, op, record } of events) {
    const spec = CHANGE_EVENTS[family][kind];
    expect(spec, `${family} ${kind}`).toBeDefined();
    expect(spec!.ops, `${family} ${kind}`).toContain(op);
    const group = op === 'delete' ? 'delete' : 'put';
    const frame = { event: kind, op, record };
    expect(
      payloadErrors(messageKey(family, kind, group), frame),
      `${family} ${kind} ${op} ${JSON.stringify(record).slice(0, 200)}`,
    ).toEqual([]);
    expect(
      changeEventSchema(family, kind, group).safeParse(frame).error?.issues ?? [],
      `${family} ${kind} ${op}`,
    ).toEqual([]);
    seen.add(`${kind} ${group}`);
  }
  return seen;
}

function checkSnapshot(family: Family, snapshot: readonly SnapshotPart[]): void {
  const kinds = snapshot.map((part) => part.kind);
  expect(kinds).toEqual(changeKindsOf(family).filter((k) => CHANGE_EVENTS[family][k]!.snapshot));
  for (const part of snapshot) {
    const items = part.rows.map((row) => (part.toWire as (row: unknown) => unknown)(row));
    expect(items.length, `${family} ${part.kind}`).toBeGreaterThan(0);
    const record = { kind: part.kind, items };
    expect(
      payloadErrors(`resyncChunk${family}`, { event: 'resync', op: 'chunk', record }),
      `${family} ${part.kind}`,
    ).toEqual([]);
    expect(resyncChunkOf(family, part.kind).safeParse(record).error?.issues ?? []).toEqual([]);
  }
}

describe("the simulator against the protocol's schemas", () => {
  it("has the change ops of the schemas, and the document's schemas refuse what does not fit them", () => {
    expectTypeOf<SimChangeOp>().toEqualTypeOf<ChangeOp>();
    expect(payloadErrors('pf4UsersPut', { event: 'users', op: 'add', record: { login: 'x', balance: 1 } })).toEqual([
      '/record/login must be integer',
    ]);
    expect(
      payloadErrors('pf5UsersPut', { event: 'users', op: 'add', record: { login: 1, rights: 'Enabled, Password' } }),
    ).toEqual([]);
    expect(payloadErrors('pf5DealsDelete', { event: 'deals', op: 'delete', record: {} })).toEqual([
      "/record must have required property 'deal'",
    ]);
  });

  it('PF4: the snapshot and the change events of accounts, dealing, symbols, groups, news, mail and the online list', () => {
    const h = pf4Harness({ trades: 20 });
    const { world } = h;
    checkSnapshot('PF4', world.snapshot());
    const tx = (fields: Json) => h.call('TradeTransaction', fields);
    const login = h.call('UserRecordNew', { record: { group: 'real\\vip', name: 'Alice', leverage: 100 } })
      .login as number;
    tx({ tradeTransactionType: 'BrBalance', tradeCommand: 'Balance', orderBy: login, price: 10_000 });
    const buy = tx({
      tradeTransactionType: 'BrOrderOpen',
      orderBy: login,
      symbol: 'EURUSD',
      tradeCommand: 'Buy',
      volume: 100,
    });
    tx({ tradeTransactionType: 'BrOrderModify', order: buy.order, sl: 1.05, tp: 1.2 });
    h.call('SymbolSendTick', { symbol: 'EURUSD', bid: 1.1, ask: 1.1002 });
    tx({ tradeTransactionType: 'BrOrderClose', order: buy.order });
    h.call('UserRecordUpdate', { login, record: { name: 'Alice A.' } });
    h.call('GroupRecordUpdate', { group: 'real\\vip', record: { company: 'VIP desk' } });
    h.call('CfgUpdateSymbol', { symbol: 'USDJPY', record: { description: 'Dollar yen' } });
    h.call('SymbolHide', { symbol: 'USDJPY' });
    h.call('SymbolAdd', { symbol: 'USDJPY' });
    const configured: string[] = h.call('CfgRequestSymbol').map((r: Json) => r.symbol as string);
    const traded = new Set([...world.trades.values()].map((t) => t.symbol));
    h.call('CfgDeleteSymbol', { pos: configured.findIndex((symbol) => !traded.has(symbol)) });
    h.call('CfgUpdateSymbolGroup', { pos: 7, record: { name: 'Exotics', description: 'Exotic pairs' } });
    h.call('NewsSend', { record: { topic: 'Rates unchanged', category: 'Economy', body: 'Full text' } });
    const news = h.call<Json[]>('NewsRequest');
    h.call('NewsBodyRequest', { key: news[news.length - 1].key });
    h.call('MailSend', { record: { subject: 'Hello', body: 'Text', logins: [login] } });
    for (let i = 0; i < 5; i++) world.services.churnOnline();
    h.call('UsersGroupOp', { record: { command: 'Delete', logins: [login] } });
    const seen = checkEvents('PF4', h.events);
    expect([...seen].sort()).toEqual([
      'groups put',
      'mail put',
      'margin delete',
      'margin put',
      'news put',
      'newsBodies put',
      'online delete',
      'online put',
      'symbolGroups put',
      'symbolInfo put',
      'symbolSessions delete',
      'symbols delete',
      'symbols put',
      'ticks put',
      'trades delete',
      'trades put',
      'users delete',
      'users put',
    ]);
  });

  it('PF5: the snapshot and the change events of accounts, dealing, deletes and configuration', () => {
    const h = pf5Harness({ trades: 20 });
    const { world } = h;
    checkSnapshot('PF5', world.snapshot());
    world.feed.inject('EURUSD', 1.1, 1.1001);
    const login = h.call('UserAdd', { record: { group: 'real\\pro', leverage: 100, firstName: 'Ann' } })
      .login as number;
    h.call('UserUpdate', { record: { login, city: 'Oslo' } });
    h.call('DealerBalance', { login, type: 'Balance', amount: 20_000 });
    h.call('DealerSend', { login, symbol: 'EURUSD', type: 'Buy', volume: 10_000 });
    const limit = h.call('DealerSend', { login, symbol: 'EURUSD', type: 'BuyLimit', volume: 10_000, price: 1.05 });
    h.call('DealerCancel', { order: limit.order });
    world.feed.inject('EURUSD', 1.1005, 1.1006);
    const deal = world.deals.values()[0].deal;
    h.call('DealUpdate', { record: { deal, comment: 'audited' } });
    const own = <V>(rows: V[], key: (v: V) => number) =>
      rows
        .map(key)
        .filter((t) => !world.foreignTickets.has(t))
        .slice(0, 1);
    h.call('PositionDeleteBatch', { tickets: own(world.positions.values(), (p) => p.position) });
    h.call('DealDeleteBatch', { tickets: own(world.deals.values(), (x) => x.deal) });
    h.call('GroupRecord', { group: 'real\\pro', patch: { marginCall: 90 } });
    h.call('SymbolRecord', { symbol: 'EURUSD', patch: { description: 'Euro' } });
    const seen = checkEvents('PF5', h.events);
    expect([...seen].sort()).toEqual([
      'deals delete',
      'deals put',
      'groups put',
      'orders delete',
      'orders put',
      'positions delete',
      'positions put',
      'symbols put',
      'ticks put',
      'users put',
    ]);
  });
});
