/**
 * Shaping data that arrives as JSON text: byte for byte the answer `success` gives for the parsed data, so an answer
 * stored under an Idempotency-Key and replayed is the same whichever way it was shaped.
 */
import { describe, expect, it } from 'vitest';
import { success, successJson, type ShapeContext } from './envelope.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const contexts: Record<string, ShapeContext> = {
  v2: { generation: 'v2', family: 'PF4', paged: false, traceId: TRACE },
  'v2 paged': { generation: 'v2', family: 'PF4', paged: true, traceId: TRACE },
  v1: { generation: 'v1', family: 'PF4', paged: false, traceId: TRACE },
};
const values: Record<string, unknown> = {
  record: {
    login: 100001,
    name: 'Zoë "Q" Müller\\',
    balance: 1234.5,
    enable: true,
    group: 'demo\\forex',
    comment: null,
  },
  page: Array.from({ length: 3 }, (_, i) => ({
    order: i + 1,
    symbol: 'EURUSD',
    volume: 0.1 * (i + 1),
    tags: [i, `t${i}`],
  })),
  'empty list': [],
  boolean: false,
  number: -0.000125,
  text: 'line\nbreak\u2028and\u0000control',
  null: null,
};

describe('successJson', () => {
  for (const [contextName, ctx] of Object.entries(contexts)) {
    for (const [valueName, value] of Object.entries(values)) {
      it(`answers a ${valueName} as success does (${contextName})`, () => {
        const paging = ctx.paged ? { nextCursor: 'WzEwXQ', hasMore: true } : undefined;
        expect(successJson(ctx, JSON.stringify(value), paging)).toStrictEqual(success(ctx, value, paging));
      });
    }
  }

  it('answers no data as null, as success does for undefined', () => {
    expect(successJson(contexts.v2, '')).toStrictEqual(success(contexts.v2, undefined));
    expect(successJson(contexts['v2 paged'], '')).toStrictEqual(success(contexts['v2 paged'], undefined));
  });
});
