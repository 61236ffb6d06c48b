/**
 * The regions of the gateway: Cloudflare's nine Durable Object location hints, and the one a caller belongs to by
 * where Cloudflare's front saw the request (`request.cf`: continent, country, colo). The table is docs/regions.md's;
 * a location this table does not know goes to its continent's region, and a request without a continent (a local
 * edge, a test) to the fallback the caller passes.
 */

/** The location hints, each a region of objects: western and eastern North America, South America, western and
 * eastern Europe, Asia-Pacific, Oceania, Africa, the Middle East. */
export const REGIONS = ['wnam', 'enam', 'sam', 'weur', 'eeur', 'apac', 'oc', 'afr', 'me'] as const;
export type Region = (typeof REGIONS)[number];

export function isRegion(value: unknown): value is Region {
  return typeof value === 'string' && (REGIONS as readonly string[]).includes(value);
}

/** What the front tells of a request's origin (a subset of `request.cf`). */
export interface RequestLocation {
  /** Two letters: AF, AN, AS, EU, NA, OC, SA. */
  continent?: unknown;
  /** ISO 3166-1 alpha-2. */
  country?: unknown;
  /** The IATA code of the data centre that took the request. */
  colo?: unknown;
}

const BY_CONTINENT: Readonly<Record<string, Region>> = {
  AF: 'afr',
  AN: 'oc',
  AS: 'apac',
  EU: 'weur',
  NA: 'enam',
  OC: 'oc',
  SA: 'sam',
};

/** The countries of Asia (by Cloudflare's continent) served from the Middle East region. */
const MIDDLE_EAST = new Set(['AE', 'BH', 'CY', 'IL', 'IQ', 'IR', 'JO', 'KW', 'LB', 'OM', 'PS', 'QA', 'SA', 'SY', 'YE']);

/** The countries of Europe served from the eastern Europe region. */
const EASTERN_EUROPE = new Set([
  'AL',
  'BA',
  'BG',
  'BY',
  'CZ',
  'EE',
  'FI',
  'GR',
  'HR',
  'HU',
  'LT',
  'LV',
  'MD',
  'ME',
  'MK',
  'PL',
  'RO',
  'RS',
  'RU',
  'SI',
  'SK',
  'TR',
  'UA',
  'XK',
]);

/**
 * North American data centres west of the continent's middle: the United States and Canada span both regions, so
 * for them the colo decides, a colo not listed here being eastern.
 */
const WESTERN_NORTH_AMERICA_COLOS = new Set([
  'ABQ',
  'ANC',
  'BOI',
  'DEN',
  'FSD',
  'HNL',
  'LAS',
  'LAX',
  'OMA',
  'PDX',
  'PHX',
  'SAN',
  'SEA',
  'SFO',
  'SJC',
  'SLC',
  'SMF',
  'YEG',
  'YVR',
  'YWG',
  'YXE',
  'YYC',
  'GDL',
  'MEX',
  'QRO',
]);

/** The region a request from `location` belongs to; `fallback` when the location names no continent it knows. */
export function regionOfLocation(location: RequestLocation, fallback: Region): Region {
  const continent = typeof location.continent === 'string' ? location.continent.toUpperCase() : '';
  const region = BY_CONTINENT[continent];
  if (!region) return fallback;
  const country = typeof location.country === 'string' ? location.country.toUpperCase() : '';
  const colo = typeof location.colo === 'string' ? location.colo.toUpperCase() : '';
  switch (continent) {
    case 'AS':
      return MIDDLE_EAST.has(country) ? 'me' : region;
    case 'EU':
      return EASTERN_EUROPE.has(country) ? 'eeur' : region;
    case 'NA':
      // Mexico lies west of the continent's middle, whichever colo takes its traffic.
      return country === 'MX' || WESTERN_NORTH_AMERICA_COLOS.has(colo) ? 'wnam' : region;
    default:
      return region;
  }
}

/**
 * The jurisdictions an organization's objects may be pinned to (Cloudflare's Durable Object jurisdictions): its
 * objects then run and store data only inside it.
 */
export const JURISDICTIONS = ['eu', 'fedramp', 'fedramp-high', 'us'] as const;
export type Jurisdiction = (typeof JURISDICTIONS)[number];

export function isJurisdiction(value: unknown): value is Jurisdiction {
  return typeof value === 'string' && (JURISDICTIONS as readonly string[]).includes(value);
}

/** The regions inside each jurisdiction: the location hints an object pinned to it can take. */
export const JURISDICTION_REGIONS: Readonly<Record<Jurisdiction, readonly Region[]>> = {
  eu: ['weur', 'eeur'],
  fedramp: ['wnam', 'enam'],
  'fedramp-high': ['wnam', 'enam'],
  us: ['wnam', 'enam'],
};

/** Whether an object in `region` may serve an organization pinned to `jurisdiction` (null: not pinned). */
export function regionAllowed(region: Region, jurisdiction: Jurisdiction | null): boolean {
  return jurisdiction === null || JURISDICTION_REGIONS[jurisdiction].includes(region);
}

/**
 * A platform's home region: the one its registry row names, else the edge's default, moved into the organization's
 * jurisdiction (its first region) when the default lies outside it.
 */
export function homeRegionOf(named: Region | null, fallback: Region, jurisdiction: Jurisdiction | null): Region {
  if (named !== null) return named;
  return regionAllowed(fallback, jurisdiction) ? fallback : JURISDICTION_REGIONS[jurisdiction!][0];
}
