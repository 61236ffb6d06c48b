/**
 * The stream object's events: ids of the epoch (its shard first), the last events held and replayed to a reconnect
 * (else `resync`), the status added on changes only and preceded by a resync after a session down, and a new epoch
 * once nobody listens after a gap.
 */
import { describe, expect, it } from 'vitest';
import { SseSink, type Interest, type RingEvent } from './fanout.js';
import { EventRing, RESYNC_MESSAGE } from './eventRing.js';

const trade = (order: number): RingEvent => ({ topic: 'trades', data: { kind: 'Added', order } });
const status = (connected: boolean): RingEvent => ({ topic: 'status', data: { connected } });

/** An SSE sink that records the text it is sent. */
function sink(interest: Interest = { topics: new Set(['trades']), symbols: null }) {
  const written: string[] = [];
  const decoder = new TextDecoder();
  const s = new SseSink(
    interest,
    (chunk) => {
      written.push(decoder.decode(chunk));
      return Promise.resolve();
    },
    () => {},
    () => {},
    { set: () => 0 },
  );
  return { s, written };
}

describe('the event ring', () => {
  it('numbers its events in its epoch, whose first two digits are the shard while no event was added', () => {
    const ring = new EventRing();
    ring.setShard(0x2a);
    expect(ring.epoch).toMatch(/^2a[0-9a-f]{6}$/);
    ring.publish(trade(1));
    ring.publish(trade(2));
    ring.setShard(1);
    expect(ring.epoch.slice(0, 2)).toBe('2a');
    expect(ring.seq).toBe(2);
    expect(ring.after(0)!.map((e) => e.id)).toEqual([`${ring.epoch}-1`, `${ring.epoch}-2`]);
    expect(ring.after(1)!.map((e) => e.seq)).toEqual([2]);
    expect(ring.after(2)).toEqual([]);
  });

  it('holds its last events only: what is owed from before them is null', () => {
    const ring = new EventRing(3);
    for (let i = 1; i <= 5; i++) ring.publish(trade(i));
    expect(ring.after(2)!.map((e) => e.seq)).toEqual([3, 4, 5]);
    expect(ring.after(1)).toBeNull();
  });

  it('adds a status only when it changes, and a status up after a down is preceded by a resync', () => {
    const ring = new EventRing();
    expect(ring.publish(status(false))).toBe(false);
    expect(ring.connected).toBe(false);
    expect(ring.publish(status(true))).toBe(true);
    expect(ring.publish(status(true))).toBe(false);
    expect(ring.after(0)!.map((e) => e.event)).toEqual([
      { topic: 'resync', data: { message: RESYNC_MESSAGE } },
      status(true),
    ]);
    expect(ring.connected).toBe(true);
    // A resync added since the down pays what it owed: the next up comes alone.
    ring.publish(status(false));
    ring.publish({ topic: 'resync', data: { message: 'moved' } });
    ring.publish(status(true));
    expect(ring.after(2)!.map((e) => e.event.topic)).toEqual(['status', 'resync', 'status']);
  });

  it('opens a stream with its status, named by the newest id', () => {
    const ring = new EventRing();
    ring.publish(trade(1));
    expect(ring.statusText()).toBe(`id: ${ring.epoch}-1\nevent: status\ndata: {"connected":false}\n\n`);
  });

  it('replays what a reconnect missed, of what it asked for', () => {
    const ring = new EventRing();
    ring.publish(trade(1));
    ring.publish({ topic: 'ticks', data: { symbol: 'EURUSD', bid: 1, ask: 2, lastTime: new Date(0).toISOString() } });
    ring.publish(trade(2));
    const { s, written } = sink();
    ring.replay(s, `${ring.epoch}-1`);
    expect(written).toEqual([`id: ${ring.epoch}-3\nevent: trades\ndata: {"kind":"Added","order":2}\n\n`]);
    const upToDate = sink();
    ring.replay(upToDate.s, ` ${ring.epoch}-3 `);
    expect(upToDate.written).toEqual([]);
  });

  it('tells a reconnect to resync when its id is of another epoch, older than the ring, newer than the stream, or unreadable', () => {
    const ring = new EventRing(2);
    for (let i = 1; i <= 4; i++) ring.publish(trade(i));
    const resync = `id: ${ring.epoch}-4\nevent: resync\ndata: {"message":"the missed events are no longer held: read the current state again","connected":false}\n\n`;
    const other = ring.epoch.startsWith('ff') ? '00' + ring.epoch.slice(2) : 'ff' + ring.epoch.slice(2);
    for (const id of [`${other}-3`, `${ring.epoch}-1`, `${ring.epoch}-5`, 'nonsense']) {
      const { s, written } = sink();
      ring.replay(s, id);
      expect(written, id).toEqual([resync]);
    }
    // The event just before the oldest held is still whole.
    const { s, written } = sink();
    ring.replay(s, `${ring.epoch}-2`);
    expect(written.join('')).toContain('"order":3');
  });

  it('once idle after a gap lets its events go and begins a new epoch of the same shard; without a gap keeps both', () => {
    const ring = new EventRing();
    ring.setShard(7);
    ring.publish(trade(1));
    const before = ring.epoch;
    ring.idle(false);
    expect(ring.epoch).toBe(before);
    expect(ring.after(0)).toHaveLength(1);
    ring.idle(true);
    expect(ring.epoch).not.toBe(before);
    expect(ring.epoch.slice(0, 2)).toBe('07');
    // Numbers go on; the events before the gap are no longer held.
    expect(ring.seq).toBe(1);
    expect(ring.after(1)).toEqual([]);
    expect(ring.after(0)).toBeNull();
  });

  it('owes no resync once idle: a status up after it comes alone', () => {
    const ring = new EventRing();
    ring.publish(status(true));
    ring.publish(status(false));
    ring.idle(false);
    ring.publish(status(true));
    expect(ring.after(2)!.map((e) => e.event.topic)).toEqual(['status']);
  });
});
