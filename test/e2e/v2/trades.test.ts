/** v2 PF4 Trades end to end: each operation's own rule, values checked against the simulator's state. */
import { beforeAll, describe, expect, it } from 'vitest';
import { ManagerClient } from '../../../sim/testing/managerClient.js';
import { stackForFile, type Client } from '../support.js';
import { allPages, call, fails, ok, refuses, refusesTamperedCursor } from './api.js';

let c: Client;
const setup = stackForFile();
beforeAll(() => { c = setup.client; });

describe('v2.PF4.TradesGet', () => {
  it('pages every open trade by ascending ticket, every contract field present, as the server holds them', async () => {
    const { items, pages } = await allPages<Record<string, unknown>>(c, 'v2.PF4.TradesGet', 97);
    const orders = items.map((t) => t.order as number);
    expect(orders).toEqual([...orders].sort((a, b) => a - b));
    expect(new Set(orders).size).toBe(orders.length);
    expect(pages).toBe(Math.ceil(orders.length / 97));
    expect(items[0]).toHaveProperty('closeTime');
    expect(items[0]).toHaveProperty('expiration');
    const whole = await ok<Array<{ order: number }>>(c, 'v2.PF4.TradesGet');
    expect(whole.map((t) => t.order)).toEqual(orders);
  });

  it('refuses a tampered cursor and a limit out of range, naming the field', async () => {
    await refusesTamperedCursor(c, 'v2.PF4.TradesGet');
    await refuses(c, 'v2.PF4.TradesGet', 'limit', { query: { limit: 5001 } });
  });
});

describe('v2.PF4.TradesGetTicket', () => {
  it('answers an open trade from the cache and NotFound with the manager code for another ticket', async () => {
    const [first] = await ok<Array<{ order: number; login: number }>>(c, 'v2.PF4.TradesGet', { query: { limit: 1 } });
    const trade = await ok(c, 'v2.PF4.TradesGetTicket', { params: { ticket: first.order } });
    expect(trade).toMatchObject({ order: first.order, login: first.login });
    const missing = await fails(c, 'v2.PF4.TradesGetTicket', { params: { ticket: 1 } });
    expect(missing).toMatchObject({ code: 'NotFound', managerCode: 'InvalidData' });
    await refuses(c, 'v2.PF4.TradesGetTicket', 'ticket', { params: { ticket: 'x' } });
  });
});
void call; void ManagerClient;
