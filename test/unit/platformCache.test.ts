/**
 * The per-isolate platform look-up cache (REGISTRY_CACHE_SECONDS) on a faked clock: what it remembers, for whom and
 * for how long. The loader stands in for the registry read scoped to the caller's organization.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { randomUUID } from 'node:crypto';
import { cachedPlatform } from '../../workers/registry/platformCache.js';
import type { PlatformEntry } from '../../workers/registry/records.js';

const T0 = Date.UTC(2026, 0, 5, 12, 0, 0);

function entryOf(id: string, organizationId: string, brokerUrl: string | null = null): PlatformEntry {
  const organization = { id: organizationId, name: 'Org', created: '2026-01-01T00:00:00.000Z' };
  return { platform: { id, name: 'P', type: 'PF4', organizationId, organization, created: organization.created }, brokerUrl };
}

/** A registry with one platform row the test can change, counting reads. */
function registry(id: string, owner: string) {
  const r = {
    row: entryOf(id, owner) as PlatformEntry | null,
    reads: 0,
    /** The loader platformOf() hands the cache: the row only for its own organization. */
    loader: (organizationId: string) => async () => {
      r.reads++;
      return r.row && r.row.platform.organizationId === organizationId ? r.row : null;
    },
  };
  return r;
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(T0);
});
afterEach(() => { vi.useRealTimers(); });

describe('platform cache', () => {
  it('remembers a found platform for the TTL, then reads the registry again', async () => {
    const [org, id] = [randomUUID(), randomUUID()];
    const reg = registry(id, org);
    expect(await cachedPlatform(org, id, 5, reg.loader(org))).toEqual(reg.row);
    reg.row = entryOf(id, org, 'http://127.0.0.1:9001');
    vi.setSystemTime(T0 + 4_999);
    expect((await cachedPlatform(org, id, 5, reg.loader(org)))!.brokerUrl).toBeNull();
    expect(reg.reads).toBe(1);
    vi.setSystemTime(T0 + 5_000);
    expect((await cachedPlatform(org, id, 5, reg.loader(org)))!.brokerUrl).toBe('http://127.0.0.1:9001');
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
    reg.row = entryOf(id, org, 'http://127.0.0.1:9002');
    expect((await cachedPlatform(org, id, 5, reg.loader(org)))!.brokerUrl).toBe('http://127.0.0.1:9002');
  });
});
