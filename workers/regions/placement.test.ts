/**
 * Where a platform's objects are for a caller (workers/regions/placement.ts): home from the registry or the edge's
 * default, near in the caller's region unless the organization's jurisdiction keeps it out, and the text a ledger
 * keeps of a placement read back.
 */
import { describe, expect, it } from 'vitest';
import { homePlacement, nearPlacement, placementOfText, placementText } from './placement.js';

const free = { homeRegion: null, jurisdiction: null } as const;

describe('homePlacement', () => {
  it("is the region the registry names, else the edge's default", () => {
    expect(homePlacement({ homeRegion: 'apac', jurisdiction: null }, 'weur')).toEqual({
      region: 'apac',
      jurisdiction: null,
    });
    expect(homePlacement(free, 'enam')).toEqual({ region: 'enam', jurisdiction: null });
  });

  it("moves a default home outside the organization's jurisdiction to the jurisdiction's first region", () => {
    expect(homePlacement({ homeRegion: null, jurisdiction: 'us' }, 'weur')).toEqual({
      region: 'wnam',
      jurisdiction: 'us',
    });
    expect(homePlacement({ homeRegion: null, jurisdiction: 'eu' }, 'eeur')).toEqual({
      region: 'eeur',
      jurisdiction: 'eu',
    });
  });
});

describe('nearPlacement', () => {
  it("is the caller's region", () => {
    expect(nearPlacement(free, 'oc', 'weur')).toEqual({ region: 'oc', jurisdiction: null });
    expect(nearPlacement({ homeRegion: 'apac', jurisdiction: null }, 'apac', 'weur')).toEqual({
      region: 'apac',
      jurisdiction: null,
    });
  });

  it("is the caller's region inside the jurisdiction, and the home outside it", () => {
    const eu = { homeRegion: 'weur', jurisdiction: 'eu' } as const;
    expect(nearPlacement(eu, 'eeur', 'weur')).toEqual({ region: 'eeur', jurisdiction: 'eu' });
    expect(nearPlacement(eu, 'apac', 'weur')).toEqual({ region: 'weur', jurisdiction: 'eu' });
    expect(nearPlacement({ homeRegion: null, jurisdiction: 'fedramp' }, 'sam', 'weur')).toEqual({
      region: 'wnam',
      jurisdiction: 'fedramp',
    });
  });
});

describe('placement text', () => {
  const fallback = { region: 'weur', jurisdiction: null } as const;

  it('is the region, with the jurisdiction after a slash, and reads back', () => {
    expect(placementText({ region: 'apac', jurisdiction: null })).toBe('apac');
    expect(placementText({ region: 'eeur', jurisdiction: 'eu' })).toBe('eeur/eu');
    for (const place of [
      { region: 'apac', jurisdiction: null },
      { region: 'wnam', jurisdiction: 'fedramp-high' },
    ] as const)
      expect(placementOfText(placementText(place), fallback)).toEqual(place);
  });

  it('reads no text, or text this edge does not know, as the fallback', () => {
    for (const text of [null, undefined, '', 'mars', 'weur/mars', 'EU'])
      expect(placementOfText(text, fallback)).toBe(fallback);
  });
});
