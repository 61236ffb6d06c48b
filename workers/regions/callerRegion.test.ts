/**
 * A request's region: from `request.cf` behind Cloudflare's front (a header naming another is ignored there), from
 * `X-Gateway-Region` or `EDGE_REGION` on a local edge, and a local header naming no region refused by name.
 */
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import type { AppEnv, Env } from '../env.js';
import { callerRegion, regionOfRequest } from './callerRegion.js';

/** A request as the front hands it on: `cf` set. */
function fronted(cf: Record<string, unknown>, headers: Record<string, string> = {}): Request {
  const request = new Request('https://edge/x', { headers });
  Object.defineProperty(request, 'cf', { value: cf });
  return request;
}

describe('regionOfRequest', () => {
  it('takes the region from the front, whatever the caller sends', () => {
    expect(regionOfRequest(fronted({ continent: 'OC', country: 'AU', colo: 'SYD' }), 'weur')).toStrictEqual({
      region: 'oc',
    });
    expect(
      regionOfRequest(fronted({ continent: 'NA', country: 'US', colo: 'EWR' }, { 'x-gateway-region': 'apac' }), 'weur'),
    ).toStrictEqual({ region: 'enam' });
  });

  it('falls back when the front tells no continent', () => {
    expect(regionOfRequest(fronted({ colo: 'XYZ' }), 'apac')).toStrictEqual({ region: 'apac' });
  });

  it('believes the header on a local edge, any case and spacing', () => {
    const local = (value?: string) =>
      new Request('http://127.0.0.1/x', { headers: value === undefined ? {} : { 'x-gateway-region': value } });
    expect(regionOfRequest(local(' APAC '), 'weur')).toStrictEqual({ region: 'apac' });
    expect(regionOfRequest(local(), 'me')).toStrictEqual({ region: 'me' });
    expect(regionOfRequest(local('mars'), 'weur')).toStrictEqual({
      problem: 'X-Gateway-Region: must be one of wnam, enam, sam, weur, eeur, apac, oc, afr, me',
    });
  });
});

describe('callerRegion', () => {
  const app = new Hono<AppEnv>();
  app.use('*', async (c, next) => {
    c.set('traceId', '0af7651916cd43dd8448eb211c80319c');
    await next();
  });
  app.use('*', callerRegion());
  app.get('/api/v2/x', (c) => c.json({ region: c.get('region') }));
  app.get('/passed', () => fetch('data:text/plain,through'));
  const env = (vars: Record<string, string>) => vars as unknown as Env;

  it('sets the region on the context and names it on the answer', async () => {
    const res = await app.request('/api/v2/x', { headers: { 'x-gateway-region': 'sam' } }, env({}));
    expect(res.headers.get('x-gateway-region')).toBe('sam');
    expect(await res.json()).toStrictEqual({ region: 'sam' });
  });

  it('serves EDGE_REGION, weur unless set, to a request naming none', async () => {
    const set = await app.request('/api/v2/x', {}, env({ EDGE_REGION: 'eeur' }));
    expect(await set.json()).toStrictEqual({ region: 'eeur' });
    const unset = await app.request('/api/v2/x', {}, env({}));
    expect(unset.headers.get('x-gateway-region')).toBe('weur');
  });

  it('names the region on an answer passed through from a fetch, whose headers are immutable', async () => {
    const res = await app.request('/passed', { headers: { 'x-gateway-region': 'afr' } }, env({}));
    expect(res.headers.get('x-gateway-region')).toBe('afr');
    expect(await res.text()).toBe('through');
  });

  it('refuses a local request naming no region, by the header and its rule, in the route generation’s shape', async () => {
    const res = await app.request('/api/v2/x', { headers: { 'x-gateway-region': 'north' } }, env({}));
    expect(res.status).toBe(200);
    const body = await res.json<{ data: unknown; error: { code: string; message: string } }>();
    expect(body.data).toBeNull();
    expect(body.error.code).toBe('Validation');
    expect(body.error.message).toBe('X-Gateway-Region: must be one of wnam, enam, sam, weur, eeur, apac, oc, afr, me');
  });
});
