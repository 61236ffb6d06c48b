/** Each region's routes to the brokers (shared/brokerRoutes.ts): the variable's rules, and a list routed. */
import { describe, expect, it } from 'vitest';
import { parseRegionBrokerRoutes, routeBrokerUrls } from './brokerRoutes.js';

describe('parseRegionBrokerRoutes', () => {
  it('reads regions, each a table of broker URL to URL, comparing URLs without a trailing slash', () => {
    const parsed = parseRegionBrokerRoutes(
      JSON.stringify({ apac: { 'http://a:8790/': 'http://relay-apac:9101' }, oc: {} }),
    );
    expect(parsed).toEqual({ ok: true, value: { apac: { 'http://a:8790': 'http://relay-apac:9101' }, oc: {} } });
  });

  it('refuses what is not that shape, naming the region or URL and the rule', () => {
    const problem = (raw: string) => {
      const r = parseRegionBrokerRoutes(raw);
      return r.ok ? null : r.problem;
    };
    expect(problem('apac=http://x')).toBe('must be a JSON object of regions, each an object of broker URL to URL');
    expect(problem('[]')).toBe('must be a JSON object of regions, each an object of broker URL to URL');
    expect(problem('{"mars":{}}')).toBe(
      'names region mars: regions are wnam, enam, sam, weur, eeur, apac, oc, afr, me',
    );
    expect(problem('{"apac":["http://a"]}')).toBe('apac: must be an object of broker URL to URL');
    expect(problem('{"apac":{"http://a":"ftp://b"}}')).toBe(
      'apac: http://a → ftp://b must be absolute http(s) URLs separated by commas; not one: ftp://b',
    );
    expect(problem('{"apac":{"http://a":"http://a/"}}')).toBe('apac: routes http://a to itself');
    expect(problem('{"apac":{"http://a":7}}')).toBe('apac: http://a → 7 must be a list of http(s) URLs');
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`http://b${i}`, `http://r${i}`]));
    expect(problem(JSON.stringify({ oc: many }))).toBe('oc: must list at most 64 brokers');
  });
});

describe('routeBrokerUrls', () => {
  const routes = { apac: { 'http://a:8790': 'http://relay-apac:9101' } };

  it('replaces the brokers a region routes, in order, and keeps the others', () => {
    expect(routeBrokerUrls(['http://a:8790', 'http://b:8790'], 'apac', routes)).toEqual([
      'http://relay-apac:9101',
      'http://b:8790',
    ]);
    expect(routeBrokerUrls(['http://b:8790', 'http://a:8790/'], 'apac', routes)).toEqual([
      'http://b:8790',
      'http://relay-apac:9101',
    ]);
  });

  it('leaves the list of a region without routes as it is', () => {
    const urls = ['http://a:8790'];
    expect(routeBrokerUrls(urls, 'weur', routes)).toBe(urls);
    expect(routeBrokerUrls(urls, 'apac', {})).toBe(urls);
  });
});
