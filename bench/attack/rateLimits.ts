/**
 * The edge's rate-limit counters as the attack drill reads them: fixed windows aligned to the clock, read without
 * spending from them, and the failure counters of source addresses, each counted in one of TOKEN_FAILURE_SHARDS
 * objects (workers/limits/counterShards.ts).
 */
import { objectCall } from '../../launcher/edge.js';
import type { Stack } from '../../launcher/stack.js';
import { shardName } from '../../workers/limits/counterShards.js';
import { progress } from './drill.js';
import { seconds, type CounterReading } from './figures.js';
import { FAILURE_LIMIT, FAILURE_SHARDS, WINDOW_MS } from './settings.js';
import { sleep } from './waiting.js';

/** When the window holding `now` ends (windows of `windowMs` are aligned to the clock). */
export function windowEnd(now: number, windowMs: number): number {
  return now - (now % windowMs) + windowMs;
}

/** Whether every reading's window began by `from`: the readings then count nothing spent before it. */
export function windowsBeganBy(readings: readonly CounterReading[], from: number, windowMs: number): boolean {
  return readings.every((r) => r.resetAt - windowMs <= from);
}

/** Reads a rate-limit counter without spending from it. */
export async function counter(stack: Stack, key: string, limit: number): Promise<CounterReading> {
  const grant = await objectCall<CounterReading>(stack.edge.miniflare, 'RATE_LIMITER', key, 'take', 0, {
    limit,
    windowMs: WINDOW_MS,
  });
  return { left: grant.left, resetAt: grant.resetAt };
}

/**
 * The failure counters of the addresses that failed: which of the TOKEN_FAILURE_SHARDS objects counts each one,
 * and how many objects that is.
 */
export async function failureShards(stack: Stack): Promise<{ shardOf: Map<string, string>; objects: number }> {
  const shardOf = new Map<string, string>();
  let objects = 0;
  for (let n = 0; n < FAILURE_SHARDS; n++) {
    const name = shardName('token-fail', n);
    const keys = Object.keys(
      await objectCall<Record<string, number>>(stack.edge.miniflare, 'RATE_LIMITER', name, 'counted'),
    );
    if (keys.length > 0) objects++;
    for (const key of keys) shardOf.set(key, name);
  }
  return { shardOf, objects };
}

/** Reads one address's failure counter in the object that counts it, without spending from it. */
export async function failureCounter(
  stack: Stack,
  shards: Map<string, string>,
  address: string,
): Promise<CounterReading> {
  const key = `token-fail:${address}`;
  const shard = shards.get(key);
  if (!shard) return { left: FAILURE_LIMIT, resetAt: windowEnd(Date.now(), WINDOW_MS) };
  const grant = await objectCall<CounterReading>(
    stack.edge.miniflare,
    'RATE_LIMITER',
    shard,
    'take',
    0,
    { limit: FAILURE_LIMIT, windowMs: WINDOW_MS },
    key,
  );
  return { left: grant.left, resetAt: grant.resetAt };
}

/** Waits for the next rate-limit window unless `needMs` is left of this one. */
export async function windowWithRoom(needMs: number): Promise<void> {
  const left = WINDOW_MS - (Date.now() % WINDOW_MS);
  if (left < needMs) {
    progress(`waiting ${seconds(left)} for a fresh rate-limit window`);
    await sleep(left + 200);
  }
}
