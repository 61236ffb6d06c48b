import { resultJson } from './handler.js';
/**
 * Cached answers travel as text: a packed table's rows leave the broker as the JSON text they are kept as, and the
 * edge wraps that text in the envelope (v2) or sends it bare (v1) without parsing it (`successJson`). The answer must
 * be the same bytes as the object path gives (the text parsed, then shaped with `success`), and its rows the same
 * text as the shaped records serialised: v1 and v2, paged and unpaged, found and not found, ids beyond 2^53 − 1 exact.
 * A large answer goes as a binary frame and is answered as bytes (`successBytes`): the same bytes again.
 */
import { describe, expect, it } from 'vitest';
import { catalog, type Operation } from '../../shared/catalog/index.js';
import { OperationError } from '../../shared/errors.js';
import { parseJson, stringifyJson } from '../../shared/losslessJson.js';
import { shapeRecord } from '../../shared/records/shape.js';
import type { Family } from '../../shared/protocol.js';
import { shapeAnswer } from '../../workers/gateway/shapeAnswer.js';
import { okFrameText, successFrame } from '../link/callDispatcher.js';
import type { ShapeContext } from '../../workers/envelope/envelope.js';
import { cacheOf, platformOf, DEADLINE } from '../../test/support/broker/handlers.js';
import type { HandlerResult } from './handler.js';
import { interpret } from './interpreter.js';

const entry = (id: string): Operation => {
  const found = catalog.find((e) => e.id === id);
  if (!found) throw new Error(`no ${id}`);
  return found;
};
const trace = '4bf92f3577b34da6a3ce929d0e0e4736';
const BIG = 2n ** 63n - 1n;

const users = [
  { login: 1001, name: 'Ann "A" Ü', group: 'demo\\forex', balance: 1500.25, email: 'a@example.com' },
  { login: 1002, name: 'Bob', group: 'real', balance: -0.5 },
];
const trades = Array.from({ length: 7 }, (_, i) => ({
  order: 5000 + i,
  login: 1001 + (i % 2),
  symbol: i % 3 ? 'EURUSD' : 'XAUUSD',
  tradeCommand: i % 4 ? 'Buy' : 'SellLimit',
  volume: 100 + i,
  openPrice: 1.1 + i / 1000,
  profit: i % 2 ? -12.5 : 30,
  comment: `t${i}`,
}));
const pf5Users = [
  { login: BIG, group: 'real\\pro', name: 'Big' },
  { login: 7, group: 'demo', name: 'Small' },
];
const positions = [
  { position: BIG, login: 7, symbol: 'EURUSD', volume: 1 },
  { position: 3, login: 7, symbol: 'GBPUSD', volume: 2 },
];

const caches = { PF4: cacheOf('PF4', { users, trades }), PF5: cacheOf('PF5', { users: pf5Users, positions }) };

/** The handler's answer shaped both ways, with the rows it answered. */
async function both(id: string, args: Record<string, unknown>) {
  const e = entry(id);
  const family = e.family as Family;
  const ctx: ShapeContext = { generation: e.generation, family, paged: !!e.paged, traceId: trace };
  let result: HandlerResult;
  try {
    result = await interpret(e)!({ platform: platformOf(family, { cache: caches[family] }), args, deadline: DEADLINE });
  } catch (error) {
    const f = error as OperationError;
    const failed = { ok: false as const, error: { code: f.code, managerCode: f.managerCode, message: f.message } };
    return { text: shapeAnswer(ctx, failed), objects: shapeAnswer(ctx, failed), json: undefined, failed: f };
  }
  const json = resultJson(result)!;
  expect(json).toBeDefined();
  const paging = result.paging ? { paging: result.paging } : {};
  const text = shapeAnswer(ctx, { ok: true, dataJson: json, ...paging });
  // A large answer's path: the broker's frame sent as UTF-8 bytes, its data cut out as bytes and answered as bytes.
  const written = successFrame(1, result);
  const frame = typeof written === 'string' ? utf8.encode(written) : new Uint8Array(written);
  expect(new TextDecoder().decode(frame)).toBe(okFrameText(1, json, result.paging));
  const head = utf8.encode(okFrameText(1, '', result.paging)).length - 1; // all but the closing brace
  const bytes = shapeAnswer(ctx, { ok: true, dataBytes: frame.subarray(head, frame.length - 1), ...paging });
  expect(bytes.body).toBeInstanceOf(Uint8Array);
  expect({ ...bytes, body: new TextDecoder().decode(bytes.body as Uint8Array) }).toStrictEqual(text);
  return { json, failed: undefined, text, objects: shapeAnswer(ctx, { ok: true, data: parseJson(json), ...paging }) };
}

const utf8 = new TextEncoder();

/** The rows as the object representation answered them: each shaped as the contract has it, then serialised. */
const shaped = (schema: string, rows: object[]) =>
  `[${rows.map((r) => stringifyJson(shapeRecord(schema)(r))).join(',')}]`;

describe('cached answers as text', () => {
  it('a v2 page, first and next, and its last: the same bytes either way, every field present', async () => {
    const first = await both('v2.PF4.TradesGet', { limit: 3 });
    expect(first.text).toStrictEqual(first.objects);
    expect(first.json).toBe(shaped('PF4Trade', trades.slice(0, 3)));
    expect(first.text.body).toMatch(
      /"meta":\{"activityId":"[0-9a-f]{32}","paging":\{"nextCursor":"[^"]+","hasMore":true\}\}\}$/,
    );
    const cursor = JSON.parse(first.text.body).meta.paging.nextCursor as string;
    const next = await both('v2.PF4.TradesGet', { limit: 3, cursor });
    expect(next.text).toStrictEqual(next.objects);
    expect(next.json).toBe(shaped('PF4Trade', trades.slice(3, 6)));
    const all = await both('v2.PF4.TradesGet', { limit: 1000 });
    expect(all.text).toStrictEqual(all.objects);
    expect(all.text.body).toContain('"paging":{"nextCursor":null,"hasMore":false}');
    expect(all.json).toBe(shaped('PF4Trade', trades));
  });

  it('v2 unpaged lists: by index, by filter, and an empty one', async () => {
    for (const [id, args, rows] of [
      ['v2.PF4.TradesGetBySymbol', { symbol: 'XAUUSD' }, trades.filter((t) => t.symbol === 'XAUUSD')],
      ['v2.PF4.TradesGetByMarket', {}, trades.filter((t) => t.tradeCommand === 'Buy' || t.tradeCommand === 'Sell')],
      ['v2.PF4.TradesGetBySymbol', { symbol: 'NONE' }, []],
    ] as const) {
      const r = await both(id, args);
      expect(r.text).toStrictEqual(r.objects);
      expect(r.json).toBe(shaped('PF4Trade', [...rows]));
    }
  });

  it('v1 lists and records: the bare data, the same bytes either way', async () => {
    const list = await both('v1.PF4.UsersGet', {});
    expect(list.text).toStrictEqual(list.objects);
    expect(list.text.body).toBe(shaped('PF4User', users));
    const record = await both('v1.PF4.UserRecordGet', { login: 1002 });
    expect(record.text).toStrictEqual(record.objects);
    expect(record.text.body).toBe(stringifyJson(shapeRecord('PF4User')(users[1])));
    const allTrades = await both('v1.PF4.TradesGet', {});
    expect(allTrades.text).toStrictEqual(allTrades.objects);
    expect(allTrades.text.body).toBe(shaped('PF4Trade', trades));
  });

  it('ids beyond 2^53 − 1 exactly, v1 and v2, records and lists', async () => {
    for (const id of ['v1.PF5.UserGet', 'v2.PF5.UserGet']) {
      const r = await both(id, { login: BIG });
      expect(r.text).toStrictEqual(r.objects);
      expect(r.text.body).toContain(`"login":${BIG}`);
    }
    const list = await both('v1.PF5.PositionGet', { login: 7 });
    expect(list.text).toStrictEqual(list.objects);
    expect(list.text.body).toBe(shaped('PF5Position', [positions[1], positions[0]]));
    expect(list.text.body).toContain(`"position":${BIG}`);
  });

  it('not found: the same failure either way, v1 and v2', async () => {
    for (const id of ['v2.PF4.UserRecordGet', 'v1.PF4.UserRecordGet', 'v2.PF4.TradeRecordGet']) {
      const r = await both(id, id.endsWith('TradeRecordGet') ? { order: 99 } : { login: 99 });
      expect(r.failed?.code).toBe('NotFound');
      expect(r.text).toStrictEqual(r.objects);
      expect(r.text.status).toBe(id.startsWith('v1') ? 404 : 200);
    }
  });
});
