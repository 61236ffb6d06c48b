/**
 * The call's time budget (workers/api/timeout.ts): the class defaults, the header before the query, the bounds and
 * the number form exactly, which field a refusal names, the operation a method and path address, and the budget
 * `timeoutApplied()` answers on every response that does not name one itself.
 */
import { describe, expect, it } from 'vitest';
import { Hono } from 'hono';
import { findOperation } from '../../shared/catalog/index.js';
import {
  operationAt,
  resolveBudget,
  resolveTimeout,
  TIMEOUT_APPLIED_HEADER,
  TIMEOUT_HEADER,
  TIMEOUT_QUERY,
  timeoutApplied,
} from './timeout.js';

const HEADER_REFUSAL = 'X-Request-Timeout: must be a number of seconds from 1 to 300';
const QUERY_REFUSAL = 'requestTimeout: must be a number of seconds from 1 to 300';

describe('resolveBudget', () => {
  it('names its header, query and answer header', () => {
    expect(TIMEOUT_HEADER).toBe('X-Request-Timeout');
    expect(TIMEOUT_APPLIED_HEADER).toBe('X-Request-Timeout-Applied');
    expect(TIMEOUT_QUERY).toBe('requestTimeout');
  });

  it('answers the class default when neither is given', () => {
    expect(resolveBudget('read', undefined, null)).toStrictEqual({ ok: true, seconds: 10 });
    expect(resolveBudget('read', undefined, undefined)).toStrictEqual({ ok: true, seconds: 10 });
    expect(resolveBudget('history', undefined, undefined)).toStrictEqual({ ok: true, seconds: 30 });
    expect(resolveBudget('change', undefined, null)).toStrictEqual({ ok: true, seconds: 15 });
    expect(resolveBudget('trade', undefined, null)).toStrictEqual({ ok: true, seconds: 5 });
    expect(resolveBudget('maintenance', undefined, null)).toStrictEqual({ ok: true, seconds: 60 });
  });

  it('takes whole and fractional seconds from 1 to 300, trimmed', () => {
    expect(resolveBudget('read', '1', null)).toStrictEqual({ ok: true, seconds: 1 });
    expect(resolveBudget('read', '300', null)).toStrictEqual({ ok: true, seconds: 300 });
    expect(resolveBudget('read', '10', null)).toStrictEqual({ ok: true, seconds: 10 });
    expect(resolveBudget('read', '2.25', null)).toStrictEqual({ ok: true, seconds: 2.25 });
    expect(resolveBudget('read', ' 7 ', null)).toStrictEqual({ ok: true, seconds: 7 });
    expect(resolveBudget('read', '299.99', null)).toStrictEqual({ ok: true, seconds: 299.99 });
    expect(resolveBudget('read', '001', null)).toStrictEqual({ ok: true, seconds: 1 });
  });

  it('takes the query when no header is sent, and the header before the query', () => {
    expect(resolveBudget('read', undefined, '7')).toStrictEqual({ ok: true, seconds: 7 });
    expect(resolveBudget('read', '3', '7')).toStrictEqual({ ok: true, seconds: 3 });
  });

  it('refuses anything else with the class default, naming the field it came from', () => {
    for (const bad of [
      '0.999',
      '300.5',
      '301',
      '0',
      '',
      ' ',
      '+5',
      '-5',
      '5e1',
      '1e2',
      '0x10',
      '1.',
      '.5',
      '1,5',
      'ten',
      '2.5s',
    ]) {
      expect(resolveBudget('change', bad, null), bad).toStrictEqual({
        ok: false,
        seconds: 15,
        message: HEADER_REFUSAL,
      });
      expect(resolveBudget('change', undefined, bad), bad).toStrictEqual({
        ok: false,
        seconds: 15,
        message: QUERY_REFUSAL,
      });
    }
    // A header sent empty is still the header: it is refused even when the query is valid.
    expect(resolveBudget('read', '', '7')).toStrictEqual({ ok: false, seconds: 10, message: HEADER_REFUSAL });
  });
});

describe('operationAt', () => {
  it('finds the entry a method and path address, parameters being any one segment', () => {
    expect(operationAt('GET', '/api/v2/PF4/p1/UserRecordGet/42')?.id).toBe('v2.PF4.UserRecordGet');
    expect(operationAt('GET', '/api/PF4/p1/UserRecordGet/42')?.id).toBe('v1.PF4.UserRecordGet');
    expect(operationAt('POST', '/api/v2/PF4/p1/UserRecordNew')?.id).toBe('v2.PF4.UserRecordNew');
    expect(operationAt('GET', '/api/v2/PF5/p1/ServerTime')?.id).toBe('v2.PF5.ServerTime');
    expect(operationAt('GET', '/api/TradePlatforms')?.id).toBe('registry.Registry.TradePlatforms');
    expect(operationAt('GET', '/api/TradePlatforms/p1')?.id).toBe('registry.Registry.TradePlatform');
    expect(operationAt('GET', '/api/TradePlatforms/p1/Ping')?.id).toBe('registry.Registry.Ping');
  });

  it('takes one trailing slash', () => {
    expect(operationAt('GET', '/api/TradePlatforms/')?.id).toBe('registry.Registry.TradePlatforms');
    expect(operationAt('GET', '/api/v2/PF4/p1/ServerTime/')?.id).toBe('v2.PF4.ServerTime');
    expect(operationAt('GET', '/api/v2/PF4/p1/ServerTime//')).toBeUndefined();
  });

  it('finds nothing for another method, a longer or shorter path, or a path inside another', () => {
    expect(operationAt('POST', '/api/v2/PF4/p1/UserRecordGet/42')).toBeUndefined();
    expect(operationAt('GET', '/api/v2/PF4/p1/UserRecordNew')).toBeUndefined();
    expect(operationAt('GET', '/api/v2/PF4/p1/UserRecordGet')).toBeUndefined();
    expect(operationAt('GET', '/api/v2/PF4/p1/UserRecordGet/42/x')).toBeUndefined();
    expect(operationAt('GET', '/api/v2/PF4/p1/UserRecordGet/')).toBeUndefined();
    expect(operationAt('GET', '/x/api/TradePlatforms')).toBeUndefined();
    expect(operationAt('GET', '/api/TradePlatformsX')).toBeUndefined();
    expect(operationAt('GET', '/api/v2/PF4/p1/p2/ServerTime')).toBeUndefined();
    expect(operationAt('GET', '/nowhere')).toBeUndefined();
  });
});

describe('timeoutApplied', () => {
  // Every answer comes from one handler: it names its own budget when asked to (`?own=`), as operation routes do.
  const app = new Hono();
  app.use('*', timeoutApplied());
  app.all('*', (c) => {
    const own = c.req.query('own');
    if (own !== undefined) c.header(TIMEOUT_APPLIED_HEADER, own);
    return c.text('answer', c.req.query('status') === '401' ? 401 : 200);
  });
  const applied = async (method: string, path: string, headers: Record<string, string> = {}) => {
    const res = await app.request(path, { method, headers });
    expect(await res.text()).toBe('answer');
    return res.headers.get('x-request-timeout-applied');
  };

  it("answers the addressed operation's class default", async () => {
    expect(await applied('GET', '/api/v2/PF4/p1/UserRecordGet/42')).toBe('10');
    expect(await applied('POST', '/api/v2/PF4/p1/UserRecordNew')).toBe('15');
    expect(await applied('POST', '/api/v2/PF4/p1/SrvRestart?status=401')).toBe('60');
    expect(await applied('GET', '/api/v2/PF4/p1/JournalRequest')).toBe('30');
  });

  it('counts a path no operation serves as a read', async () => {
    expect(await applied('GET', '/api/Nowhere')).toBe('10');
    expect(await applied('DELETE', '/api/v2/PF4/p1/UserRecordNew')).toBe('10');
  });

  it('answers the valid requested budget, from the header before the query, else the default', async () => {
    expect(await applied('POST', '/api/v2/PF4/p1/UserRecordNew', { 'X-Request-Timeout': '42' })).toBe('42');
    expect(await applied('POST', '/api/v2/PF4/p1/UserRecordNew?requestTimeout=2.5')).toBe('2.5');
    expect(
      await applied('POST', '/api/v2/PF4/p1/UserRecordNew?requestTimeout=2.5', { 'X-Request-Timeout': '42' }),
    ).toBe('42');
    expect(await applied('POST', '/api/v2/PF4/p1/UserRecordNew?requestTimeout=999')).toBe('15');
  });

  it('leaves a budget the route named itself', async () => {
    expect(await applied('POST', '/api/v2/PF4/p1/UserRecordNew?own=3', { 'X-Request-Timeout': '42' })).toBe('3');
  });
});

describe('resolveTimeout', () => {
  const op = (id: string) => findOperation(id)!;
  const read = op('v2.PF4.ServerTime');
  it('uses the class default, the header before the query, and refuses out-of-range values', () => {
    expect(resolveTimeout(read, undefined, null)).toStrictEqual({ ok: true, seconds: 10 });
    expect(resolveTimeout(op('v2.PF4.UserRecordNew'), undefined, null).seconds).toBe(15);
    expect(resolveTimeout(op('v2.PF4.SrvRestart'), undefined, null).seconds).toBe(60);
    expect(resolveTimeout(read, '2.5', '7')).toStrictEqual({ ok: true, seconds: 2.5 });
    expect(resolveTimeout(read, undefined, '300')).toStrictEqual({ ok: true, seconds: 300 });
    expect(resolveTimeout(read, '0.5', null)).toMatchObject({
      ok: false,
      seconds: 10,
      message: 'X-Request-Timeout: must be a number of seconds from 1 to 300',
    });
    expect(resolveTimeout(read, undefined, '301')).toMatchObject({
      ok: false,
      message: 'requestTimeout: must be a number of seconds from 1 to 300',
    });
    expect(resolveTimeout(read, '1e2', null).ok).toBe(false);
  });
});
