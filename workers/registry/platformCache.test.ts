/**
 * The per-isolate platform look-up cache (REGISTRY_CACHE_SECONDS) on a faked clock: what it remembers, for whom and
 * for how long. The loader stands in for the registry read scoped to the caller's organization.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { randomUUID } from 'node:crypto';
import { cachedClientStanding, cachedPlatform, DEFAULT_PLATFORM_CACHE_SECONDS } from './platformCache.js';
import type { ClientStanding, PlatformEntry } from './records.js';

const T0 = Date.UTC(2026, 0, 5, 12, 0, 0);

function entryOf(id: string, organizationId: string, brokerUrls: string[] | null = null): PlatformEntry {
  const organization = { id: organizationId, name: 'Org', created: '2026-01-01T00:00:00.000Z' };
  return {
    platform: { id, name: 'P', type: 'PF4', organizationId, organization, created: organization.created },
    brokerUrls,
    homeRegion: null,
    jurisdiction: null,
  };
}

/** A registry with one platform row the test can change, counting reads. */
function registry(id: string, owner: string) {
  const r = {
    row: entryOf(id, owner) as PlatformEntry | null,
    reads: 0,
    /** The loader platformOf() hands the cache: the row only for its own organization. */
    loader: (organizationId: string) => () => {
      r.reads++;
      return Promise.resolve(r.row && r.row.platform.organizationId === organizationId ? r.row : null);
    },
  };
  return r;
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

describe('platform cache', () => {
  it('remembers a found platform for the TTL, then reads the registry again', async () => {
    const [org, id] = [randomUUID(), randomUUID()];
    const reg = registry(id, org);
    expect(await cachedPlatform(org, id, 5, reg.loader(org))).toEqual(reg.row);
    reg.row = entryOf(id, org, ['http://127.0.0.1:9001', 'http://127.0.0.1:9003']);
    vi.setSystemTime(T0 + 4_999);
    expect((await cachedPlatform(org, id, 5, reg.loader(org)))!.brokerUrls).toBeNull();
    expect(reg.reads).toBe(1);
    vi.setSystemTime(T0 + 5_000);
    expect((await cachedPlatform(org, id, 5, reg.loader(org)))!.brokerUrls).toEqual([
      'http://127.0.0.1:9001',
      'http://127.0.0.1:9003',
    ]);
    expect(reg.reads).toBe(2);
  });

  it('stops answering a removed platform within the TTL', async () => {
    const [org, id] = [randomUUID(), randomUUID()];
    const reg = registry(id, org);
    await cachedPlatform(org, id, 5, reg.loader(org));
    reg.row = null; // removed from the registry
    vi.setSystemTime(T0 + 2_000);
    expect(await cachedPlatform(org, id, 5, reg.loader(org))).not.toBeNull();
    vi.setSystemTime(T0 + 5_000);
    expect(await cachedPlatform(org, id, 5, reg.loader(org))).toBeNull();
    // Not found is not remembered: a platform registered again works at once.
    reg.row = entryOf(id, org);
    expect(await cachedPlatform(org, id, 5, reg.loader(org))).toEqual(reg.row);
  });

  it('never answers one organization from an entry read for another, inside the TTL', async () => {
    const [owner, stranger, id] = [randomUUID(), randomUUID(), randomUUID()];
    const reg = registry(id, owner);
    expect(await cachedPlatform(owner, id, 60, reg.loader(owner))).not.toBeNull();
    expect(await cachedPlatform(stranger, id, 60, reg.loader(stranger))).toBeNull();
    expect(await cachedPlatform(stranger.toUpperCase(), id.toUpperCase(), 60, reg.loader(stranger))).toBeNull();
    expect(reg.reads).toBe(3);
    // The owner's entry is still cached, under any spelling of the ids.
    expect(await cachedPlatform(owner.toUpperCase(), id.toUpperCase(), 60, reg.loader(owner))).not.toBeNull();
    expect(reg.reads).toBe(3);
  });

  it('reads the registry on every call with a TTL of 0', async () => {
    const [org, id] = [randomUUID(), randomUUID()];
    const reg = registry(id, org);
    for (let i = 0; i < 3; i++) await cachedPlatform(org, id, 0, reg.loader(org));
    expect(reg.reads).toBe(3);
    reg.row = null;
    expect(await cachedPlatform(org, id, 0, reg.loader(org))).toBeNull();
    // A TTL of 0 must not leave anything behind for a later call with a TTL either.
    reg.row = entryOf(id, org, ['http://127.0.0.1:9002']);
    expect((await cachedPlatform(org, id, 5, reg.loader(org)))!.brokerUrls).toEqual(['http://127.0.0.1:9002']);
  });
});

describe('client standing cache', () => {
  const standing = (clientId: string, disabled = false): ClientStanding => ({
    clientId,
    organizationId: randomUUID(),
    disabled,
    scopes: ['webapi'],
    allowedNetworks: [],
  });

  it('remembers a standing for the TTL, a change showing once it has passed', async () => {
    const id = `client-${randomUUID()}`;
    let row: ClientStanding | null = standing(id);
    let reads = 0;
    const load = () => {
      reads++;
      return Promise.resolve(row);
    };
    expect(await cachedClientStanding(id, 5, load)).toEqual(row);
    const first = row;
    row = { ...row, disabled: true };
    vi.setSystemTime(T0 + 4_999);
    expect(await cachedClientStanding(id, 5, load)).toEqual(first);
    expect(reads).toBe(1);
    vi.setSystemTime(T0 + 5_000);
    expect(await cachedClientStanding(id, 5, load)).toEqual(row);
    expect(reads).toBe(2);
  });

  it('remembers an unknown client as unknown for the TTL too', async () => {
    const id = `client-${randomUUID()}`;
    let row: ClientStanding | null = null;
    let reads = 0;
    const load = () => {
      reads++;
      return Promise.resolve(row);
    };
    expect(await cachedClientStanding(id, 5, load)).toBeNull();
    row = standing(id);
    vi.setSystemTime(T0 + 4_000);
    expect(await cachedClientStanding(id, 5, load)).toBeNull();
    expect(reads).toBe(1);
    vi.setSystemTime(T0 + 5_000);
    expect(await cachedClientStanding(id, 5, load)).toEqual(row);
    expect(reads).toBe(2);
  });

  it('reads on every call with a TTL of 0 or less, keeping nothing for later calls', async () => {
    const id = `client-${randomUUID()}`;
    let row: ClientStanding | null = standing(id);
    let reads = 0;
    const load = () => {
      reads++;
      return Promise.resolve(row);
    };
    await cachedClientStanding(id, 0, load);
    await cachedClientStanding(id, -1, load);
    expect(reads).toBe(2);
    row = standing(id, true);
    expect(await cachedClientStanding(id, 5, load)).toEqual(row);
    expect(reads).toBe(3);
  });

  it('keeps client ids apart, case included', async () => {
    const id = `Client-${randomUUID()}`;
    const upper = standing(id);
    const lower = standing(id.toLowerCase());
    expect(await cachedClientStanding(id, 60, () => Promise.resolve(upper))).toEqual(upper);
    expect(await cachedClientStanding(id.toLowerCase(), 60, () => Promise.resolve(lower))).toEqual(lower);
    expect(await cachedClientStanding(id, 60, () => Promise.resolve(null))).toEqual(upper);
  });
});

describe('cache bounds', () => {
  it('holds at most 10 000 platforms, forgetting the oldest read first', async () => {
    const org = randomUUID();
    const ids = Array.from({ length: 10_001 }, () => randomUUID());
    let reads = 0;
    const load = (id: string) => () => {
      reads++;
      return Promise.resolve(entryOf(id, org));
    };
    for (const id of ids.slice(0, 10_000)) await cachedPlatform(org, id, 60, load(id));
    // A re-read entry counts as the newest again: ids[0] is refreshed after its TTL, so ids[1] is now the oldest.
    vi.setSystemTime(T0 + 60_000);
    await cachedPlatform(org, ids[0], 60, load(ids[0]));
    vi.setSystemTime(T0 + 1_000);
    reads = 0;
    await cachedPlatform(org, ids[10_000], 60, load(ids[10_000]));
    expect(reads).toBe(1);
    await cachedPlatform(org, ids[0], 60, load(ids[0]));
    await cachedPlatform(org, ids[2], 60, load(ids[2]));
    expect(reads).toBe(1);
    await cachedPlatform(org, ids[1], 60, load(ids[1]));
    expect(reads).toBe(2);
  });
});

describe('REGISTRY_CACHE_SECONDS', () => {
  it('is 5 seconds by default (its reading: environment.test.ts)', () => {
    expect(DEFAULT_PLATFORM_CACHE_SECONDS).toBe(5);
  });
});
