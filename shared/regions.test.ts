/** The region of a request's location (docs/regions.md's table), each rule and its fallback. */
import { describe, expect, it } from 'vitest';
import {
  homeRegionOf,
  isJurisdiction,
  isRegion,
  JURISDICTION_REGIONS,
  JURISDICTIONS,
  REGIONS,
  regionAllowed,
  regionOfLocation,
} from './regions.js';

describe('regionOfLocation', () => {
  it.for([
    [{ continent: 'AF', country: 'ZA', colo: 'JNB' }, 'afr'],
    [{ continent: 'AN', country: 'AQ' }, 'oc'],
    [{ continent: 'AS', country: 'JP', colo: 'NRT' }, 'apac'],
    [{ continent: 'AS', country: 'IN', colo: 'BOM' }, 'apac'],
    [{ continent: 'AS', country: 'AE', colo: 'DXB' }, 'me'],
    [{ continent: 'AS', country: 'IL', colo: 'TLV' }, 'me'],
    [{ continent: 'EU', country: 'DE', colo: 'FRA' }, 'weur'],
    [{ continent: 'EU', country: 'GB', colo: 'LHR' }, 'weur'],
    [{ continent: 'EU', country: 'PL', colo: 'WAW' }, 'eeur'],
    [{ continent: 'EU', country: 'TR', colo: 'IST' }, 'eeur'],
    [{ continent: 'NA', country: 'US', colo: 'EWR' }, 'enam'],
    [{ continent: 'NA', country: 'US', colo: 'LAX' }, 'wnam'],
    [{ continent: 'NA', country: 'CA', colo: 'YVR' }, 'wnam'],
    [{ continent: 'NA', country: 'CA', colo: 'YYZ' }, 'enam'],
    [{ continent: 'NA', country: 'MX', colo: 'MIA' }, 'wnam'],
    [{ continent: 'NA', country: 'PA', colo: 'PTY' }, 'enam'],
    [{ continent: 'OC', country: 'AU', colo: 'SYD' }, 'oc'],
    [{ continent: 'SA', country: 'BR', colo: 'GRU' }, 'sam'],
    [{ continent: 'eu', country: 'pl', colo: 'waw' }, 'eeur'],
  ] as const)('%o is %s', ([location, region]) => {
    expect(regionOfLocation(location, 'enam')).toBe(region);
  });

  it('gives the fallback to a location without a continent it knows', () => {
    expect(regionOfLocation({}, 'apac')).toBe('apac');
    expect(regionOfLocation({ continent: 'T1', country: 'XX' }, 'me')).toBe('me');
    expect(regionOfLocation({ continent: 7 }, 'sam')).toBe('sam');
  });

  it('knows the nine location hints and nothing else', () => {
    expect(REGIONS).toStrictEqual(['wnam', 'enam', 'sam', 'weur', 'eeur', 'apac', 'oc', 'afr', 'me']);
    expect(isRegion('oc')).toBe(true);
    expect(isRegion('OC')).toBe(false);
    expect(isRegion('eu')).toBe(false);
  });
});

describe('jurisdictions', () => {
  it("are Cloudflare's four, each with the regions inside it", () => {
    expect(JURISDICTIONS).toEqual(['eu', 'fedramp', 'fedramp-high', 'us']);
    expect(JURISDICTION_REGIONS).toEqual({
      eu: ['weur', 'eeur'],
      fedramp: ['wnam', 'enam'],
      'fedramp-high': ['wnam', 'enam'],
      us: ['wnam', 'enam'],
    });
    expect(['eu', 'us', 'x', 'EU', null].map(isJurisdiction)).toEqual([true, true, false, false, false]);
  });

  it('allow every region without one, and only their own with one', () => {
    expect(REGIONS.every((r) => regionAllowed(r, null))).toBe(true);
    expect(REGIONS.filter((r) => regionAllowed(r, 'eu'))).toEqual(['weur', 'eeur']);
    expect(REGIONS.filter((r) => regionAllowed(r, 'us'))).toEqual(['wnam', 'enam']);
  });

  it('give a platform the home its row names, else the default moved inside the jurisdiction', () => {
    expect(homeRegionOf('apac', 'weur', null)).toBe('apac');
    expect(homeRegionOf(null, 'weur', null)).toBe('weur');
    expect(homeRegionOf(null, 'weur', 'eu')).toBe('weur');
    expect(homeRegionOf(null, 'weur', 'us')).toBe('wnam');
    expect(homeRegionOf(null, 'enam', 'fedramp')).toBe('enam');
  });
});
