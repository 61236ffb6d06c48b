import { describe, expect, it } from 'vitest';
import {
  balanceOperationOfHistory,
  canonicalJson,
  deliveryBody,
  eventId,
  webhookEventsOf,
  type WebhookEvent,
} from './webhookEvents.js';

describe('webhook events of the change stream', () => {
  it('maps PF4 account and trade changes to their types, without the change kind', () => {
    expect(webhookEventsOf('PF4', { topic: 'users', data: { kind: 'Added', login: 7, name: 'A' } })).toEqual([
      { type: 'account.created', login: 7, data: { login: 7, name: 'A' } },
    ]);
    expect(webhookEventsOf('PF4', { topic: 'users', data: { kind: 'Updated', login: 7 } })[0].type).toBe(
      'account.changed',
    );
    expect(webhookEventsOf('PF4', { topic: 'users', data: { kind: 'Deleted', login: 7 } })[0].type).toBe(
      'account.deleted',
    );
    expect(webhookEventsOf('PF4', { topic: 'trades', data: { kind: 'Added', order: 1, login: 7 } })).toEqual([
      { type: 'trade.opened', login: 7, data: { order: 1, login: 7 } },
    ]);
    expect(webhookEventsOf('PF4', { topic: 'trades', data: { kind: 'Updated', order: 1, login: 7 } })[0].type).toBe(
      'trade.changed',
    );
    expect(webhookEventsOf('PF4', { topic: 'trades', data: { kind: 'Deleted', order: 1, login: 7 } })[0].type).toBe(
      'trade.closed',
    );
  });

  it('names PF5 positions, orders and deals by their own names, and a balance deal a balance operation', () => {
    const types = (topic: 'positions' | 'orders' | 'deals', kind: string, extra = {}) =>
      webhookEventsOf('PF5', { topic, data: { kind, login: 9, ...extra } }).map((e) => e.type);
    expect(types('positions', 'Added')).toEqual(['position.opened']);
    expect(types('positions', 'Updated')).toEqual(['position.changed']);
    expect(types('positions', 'Deleted')).toEqual(['position.closed']);
    expect(types('orders', 'Added')).toEqual(['order.placed']);
    expect(types('orders', 'Updated')).toEqual(['order.changed']);
    expect(types('orders', 'Deleted')).toEqual(['order.removed']);
    expect(types('deals', 'Added', { action: 'Buy' })).toEqual(['deal.added']);
    expect(types('deals', 'Deleted', { action: 'Buy' })).toEqual([]);
    expect(types('deals', 'Updated', { action: 'Buy' })).toEqual([]);
    expect(
      webhookEventsOf('PF5', {
        topic: 'deals',
        data: { kind: 'Added', deal: 5, login: 9, action: 'Credit', profit: 50, comment: 'c', time: 't' },
      }),
    ).toEqual([
      {
        type: 'balance.operation',
        login: 9,
        data: { ticket: 5, login: 9, type: 'Credit', amount: 50, comment: 'c', time: 't' },
      },
    ]);
  });

  it('tells margin levels reached: PF5 on entering, PF4 when the level type becomes one', () => {
    expect(
      webhookEventsOf('PF5', { topic: 'margin', data: { login: 1, type: 'StopOut', direction: 'Enter' } })[0].type,
    ).toBe('margin.stopOut');
    expect(
      webhookEventsOf('PF5', { topic: 'margin', data: { login: 1, type: 'StopOut', direction: 'Leave' } }),
    ).toEqual([]);
    const pf4 = (levelType: string, before?: string) =>
      webhookEventsOf('PF4', { topic: 'margin', data: { login: 1, levelType } }, before).map((e) => e.type);
    expect(pf4('MarginCall', 'Ok')).toEqual(['margin.call']);
    expect(pf4('MarginCall', 'MarginCall')).toEqual([]);
    expect(pf4('StopOut', 'MarginCall')).toEqual(['margin.stopOut']);
    expect(pf4('Ok', 'StopOut')).toEqual([]);
  });

  it('tells the platform down and up, and gives nothing for ticks and symbols', () => {
    expect(webhookEventsOf('PF4', { topic: 'status', data: { connected: false } })[0].type).toBe('platform.down');
    expect(webhookEventsOf('PF5', { topic: 'status', data: { connected: true } })[0].type).toBe('platform.up');
    expect(
      webhookEventsOf('PF4', { topic: 'ticks', data: { symbol: 'EURUSD', bid: 1, ask: 2, lastTime: 'x' } }),
    ).toEqual([]);
    expect(webhookEventsOf('PF4', { topic: 'symbols', data: { kind: 'Updated', symbol: 'EURUSD' } })).toEqual([]);
  });

  it('reads balance and credit entries of a PF4 history, and no trade', () => {
    expect(
      balanceOperationOfHistory({
        order: 3,
        login: 7,
        cmd: 'Balance',
        profit: 100,
        comment: 'Deposit',
        closeTime: 't',
      }),
    ).toEqual({
      type: 'balance.operation',
      login: 7,
      data: { ticket: 3, login: 7, type: 'Balance', amount: 100, comment: 'Deposit', time: 't' },
    });
    expect(balanceOperationOfHistory({ order: 4, login: 7, cmd: 'Buy' })).toBeNull();
  });
});

describe('event ids', () => {
  it('are the same for the same record in any field order, and differ by platform, type and content', async () => {
    const a = await eventId('p', { type: 'account.changed', login: 1, data: { login: 1, name: 'A', group: 'g' } });
    const b = await eventId('p', { type: 'account.changed', login: 1, data: { group: 'g', name: 'A', login: 1 } });
    expect(a).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(b).toBe(a);
    expect(
      await eventId('q', { type: 'account.changed', login: 1, data: { login: 1, name: 'A', group: 'g' } }),
    ).not.toBe(a);
    expect(
      await eventId('p', { type: 'account.created', login: 1, data: { login: 1, name: 'A', group: 'g' } }),
    ).not.toBe(a);
    expect(
      await eventId('p', { type: 'account.changed', login: 1, data: { login: 1, name: 'B', group: 'g' } }),
    ).not.toBe(a);
    expect(await eventId('p', { type: 'platform.up', login: null, data: {} }, '1')).not.toBe(
      await eventId('p', { type: 'platform.up', login: null, data: {} }, '2'),
    );
  });

  it('canonical JSON sorts members at every depth and leaves arrays in order', () => {
    expect(canonicalJson({ b: [2, { d: 1, c: 2 }], a: null, e: undefined })).toBe('{"a":null,"b":[2,{"c":2,"d":1}]}');
  });

  it('a delivery body names the event, its type, time, platform and family around the record', () => {
    const event: WebhookEvent = {
      id: 'evt_1',
      type: 'trade.opened',
      platform: 'p',
      family: 'PF4',
      login: 7,
      occurredAt: '2026-12-04T00:00:00.000Z',
      data: { order: 1 },
    };
    expect(JSON.parse(deliveryBody(event))).toEqual({
      id: 'evt_1',
      type: 'trade.opened',
      timestamp: '2026-12-04T00:00:00.000Z',
      platform: 'p',
      family: 'PF4',
      data: { order: 1 },
    });
  });
});
