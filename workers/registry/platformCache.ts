/**
 * Platform look-ups of the hot path, remembered per isolate for a few seconds: every API call resolves its platform
 * within the caller's organization, and a registry read per call would cost more than the cached read it guards.
 * Keyed by organization and platform, so an entry can only ever answer the organization it was read for. Only found
 * platforms are remembered: a newly registered platform works at once, a removed one stops within the TTL.
 */
import type { PlatformEntry } from './records.js';

const MAX_ENTRIES = 10_000;
export const DEFAULT_PLATFORM_CACHE_SECONDS = 5;
const entries = new Map<string, { entry: PlatformEntry; until: number }>();

export async function cachedPlatform(
  organizationId: string, platformId: string, ttlSeconds: number, load: () => Promise<PlatformEntry | null>,
): Promise<PlatformEntry | null> {
  if (ttlSeconds <= 0) return load();
  const key = `${organizationId.toLowerCase()}:${platformId.toLowerCase()}`;
  const now = Date.now();
  const hit = entries.get(key);
  if (hit && hit.until > now) return hit.entry;
  const entry = await load();
  if (entry) {
    if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
    entries.set(key, { entry, until: now + ttlSeconds * 1000 });
  } else {
    entries.delete(key);
  }
  return entry;
}
