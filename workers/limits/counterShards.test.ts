/**
 * Which counter object counts a source address (workers/limits/counterShards.ts): always the same one for the same
 * secret, spread over every object, and a different spread under another secret, so a caller who does not know the
 * secret cannot choose addresses that land on one object.
 */
import { describe, expect, it } from 'vitest';
import { shardName, shardOf } from './counterShards.js';

const addresses = Array.from({ length: 1600 }, (_, i) => `token-fail:198.18.${i >> 8}.${i & 255}`);

describe('counter shards', () => {
  it('are named by purpose and number', () => {
    expect(shardName('token-fail', 7)).toBe('token-fail#7');
  });

  it('pick the same object for a key every time, from 0 to shards - 1, spread over all of them', async () => {
    const picks = await Promise.all(addresses.map((a) => shardOf('secret-1', a, 16)));
    expect(await Promise.all(addresses.map((a) => shardOf('secret-1', a, 16)))).toEqual(picks);
    const perShard = Array.from({ length: 16 }, (_, n) => picks.filter((p) => p === n).length);
    // 100 each on average: none empty, none holding more than twice its share.
    expect(Math.min(...perShard)).toBeGreaterThan(0);
    expect(Math.max(...perShard)).toBeLessThan(200);
    expect(await shardOf('secret-1', addresses[0], 1)).toBe(0);
  });

  it('spread the keys differently under another secret, an empty one included', async () => {
    const one = await Promise.all(addresses.map((a) => shardOf('secret-1', a, 16)));
    const other = await Promise.all(addresses.map((a) => shardOf('secret-2', a, 16)));
    const none = await Promise.all(addresses.map((a) => shardOf('', a, 16)));
    // By chance a sixteenth would agree: far from all of them.
    expect(one.filter((p, i) => p === other[i]).length).toBeLessThan(addresses.length / 4);
    expect(one.filter((p, i) => p === none[i]).length).toBeLessThan(addresses.length / 4);
  });
});
