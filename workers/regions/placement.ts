/**
 * Where a platform's objects live for one caller (docs/regions.md): its **home** objects, in the platform's home
 * region, take its live reads and writes (and the ledgers of keyed writes sit there too); its **near** objects, in the
 * caller's region, answer the caller's cached reads and serve its streams. A platform of an organization pinned to a
 * jurisdiction has every object inside it: a caller from a region outside the jurisdiction is served by the home
 * region's objects. Pure, so the launcher, the benches and the tests find the same objects the edge uses.
 */
import {
  homeRegionOf,
  isJurisdiction,
  isRegion,
  regionAllowed,
  type Jurisdiction,
  type Region,
} from '../../shared/regions.js';

/** Where one object is created: the location hint it gets on its first `get()`, and the jurisdiction it is pinned to. */
export interface Placement {
  region: Region;
  jurisdiction: Jurisdiction | null;
}

/** What the registry says of a platform's placement (`PlatformEntry`). */
export interface PlacedPlatform {
  homeRegion: Region | null;
  jurisdiction: Jurisdiction | null;
}

/** The platform's home placement: the region its row names, else the edge's HOME_REGION (moved into its jurisdiction). */
export function homePlacement(platform: PlacedPlatform, defaultHome: Region): Placement {
  return {
    region: homeRegionOf(platform.homeRegion, defaultHome, platform.jurisdiction),
    jurisdiction: platform.jurisdiction,
  };
}

/** The placement of the objects that serve a caller in `caller`'s region: there, unless the jurisdiction forbids it. */
export function nearPlacement(platform: PlacedPlatform, caller: Region, defaultHome: Region): Placement {
  if (regionAllowed(caller, platform.jurisdiction)) return { region: caller, jurisdiction: platform.jurisdiction };
  return homePlacement(platform, defaultHome);
}

/** A placement as one short text (`weur`, `weur/eu`), as a ledger keeps it with a key. */
export function placementText(place: Placement): string {
  return place.jurisdiction === null ? place.region : `${place.region}/${place.jurisdiction}`;
}

/** A placement from its text (`placementText`); `fallback` for text this edge cannot read (none: a row kept before regions). */
export function placementOfText(text: string | null | undefined, fallback: Placement): Placement {
  if (!text) return fallback;
  const [region, jurisdiction] = text.split('/');
  if (!isRegion(region)) return fallback;
  if (jurisdiction === undefined) return { region, jurisdiction: null };
  return isJurisdiction(jurisdiction) ? { region, jurisdiction } : fallback;
}
