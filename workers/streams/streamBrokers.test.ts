/**
 * A stream object's choice of broker alone (no workerd): the first of the list, the next one (wrapping round) when the
 * one in use is left, a broker left waiting out a backoff that grows while it keeps failing and restarts once it
 * accepts a subscription, and a broker alone reconnected to after its backoff.
 */
import { describe, expect, it } from 'vitest';
import { STREAM_BACKOFF_MS, StreamBrokers } from './streamBrokers.js';

function clocked(urls: string[]) {
  let now = 1_000_000;
  const brokers = new StreamBrokers(urls, () => now);
  return {
    brokers,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe('StreamBrokers', () => {
  it('starts on the first broker and moves to the next when it is left, counting why', () => {
    const { brokers } = clocked(['http://a', 'http://b', 'http://c']);
    expect([brokers.paired, brokers.current, brokers.currentUrl, brokers.waitMs()]).toEqual([true, 0, 'http://a', 0]);
    expect(brokers.leave(0, 'hung')).toBe(true);
    expect([brokers.current, brokers.waitMs()]).toEqual([1, 0]);
    expect(brokers.leave(1, 'draining')).toBe(true);
    expect([brokers.currentUrl, brokers.waitMs()]).toEqual(['http://c', 0]);
    expect(brokers.failovers).toEqual({ hung: 1, draining: 1 });
  });

  it('wraps round to a broker left before once its backoff has passed, else waits for the soonest', () => {
    const { brokers, advance } = clocked(['http://a', 'http://b']);
    brokers.leave(0, 'lost');
    advance(STREAM_BACKOFF_MS[0]);
    // The first broker's wait is over: it takes the subscription back when the second fails.
    expect(brokers.leave(1, 'unreachable')).toBe(true);
    expect([brokers.current, brokers.waitMs()]).toEqual([0, 0]);
    // Both waiting now: the one whose wait ends first, the second (failed once, where the first has failed twice).
    expect(brokers.leave(0, 'unreachable')).toBe(true);
    expect(brokers.current).toBe(1);
    expect(brokers.waitMs()).toBe(STREAM_BACKOFF_MS[0]);
  });

  it('lets the backoff of a broker that keeps failing grow to its last step, and start afresh once it subscribes', () => {
    const { brokers, advance } = clocked(['http://a']);
    expect(brokers.paired).toBe(false);
    const waits: number[] = [];
    for (let i = 0; i < STREAM_BACKOFF_MS.length + 2; i++) {
      // Alone, the broker is no failover: it is tried again after its wait.
      expect(brokers.leave(0, 'lost')).toBe(false);
      waits.push(brokers.waitMs());
      advance(brokers.waitMs());
    }
    expect(waits).toEqual([...STREAM_BACKOFF_MS, 5000, 5000]);
    brokers.subscribed(0);
    brokers.leave(0, 'lost');
    expect(brokers.waitMs()).toBe(STREAM_BACKOFF_MS[0]);
    expect(brokers.failovers).toEqual({});
  });

  it('leaves a broker not in use without moving, and names a list by its URLs in order', () => {
    const { brokers } = clocked(['http://a', 'http://b']);
    expect(brokers.leave(1, 'lost')).toBe(false);
    expect(brokers.current).toBe(0);
    expect(StreamBrokers.key(['http://a', 'http://b'])).toBe(brokers.key);
    expect(StreamBrokers.key(['http://b', 'http://a'])).not.toBe(brokers.key);
    expect(() => new StreamBrokers([])).toThrow('a platform needs at least one broker');
  });
});
