/**
 * The passes over a stream object's clients: a burst reaches each client in one delivery, a client not ready is owed
 * nothing from before, one owed events no longer held is told it fell behind, one still writing or written to within
 * the flush interval is come back to, and an event read between two turns of a pass reaches the clients of the turns
 * still to come together with the rest.
 */
import { describe, expect, it, vi } from 'vitest';
import type { Encoded, RingEvent } from './fanout.js';
import type { SharedChunks, StreamClient } from './clients.js';
import { EventRing } from './eventRing.js';
import { ClientPass, SLICE } from './clientPass.js';

const trade = (order: number): RingEvent => ({ topic: 'trades', data: { kind: 'Added', order } });

/** A client that records each delivery's event numbers and when it came. */
class Recorder implements StreamClient {
  readonly caller = { clientId: 'c', organizationId: 'o', expiresAt: 0 };
  sentSeq = 0;
  lastAt = -Infinity;
  closed = false;
  ready = true;
  writing = false;
  behinds = 0;
  readonly got: number[][] = [];
  readonly at: number[] = [];
  onDeliver: (() => void) | undefined;
  stillWriting(): boolean {
    return this.writing;
  }
  deliver(range: readonly Encoded[], chunks: SharedChunks): void {
    expect(chunks).toBeDefined();
    this.got.push(range.map((e) => e.seq));
    this.at.push(Date.now());
    this.onDeliver?.();
  }
  behind(): void {
    this.behinds++;
    this.closed = true;
  }
  end(): void {}
  ping(): void {}
}

function passing(clients: StreamClient[], flushMs = 0, ring = new EventRing()) {
  const pass = new ClientPass(ring, { clients: () => clients, flushMs: () => flushMs });
  const publish = (...events: RingEvent[]) => {
    for (const e of events) ring.publish(e);
    pass.wake();
  };
  return { ring, pass, publish };
}

describe('a pass over the clients', () => {
  it('gives each client a burst of events in one delivery', async () => {
    const clients = [new Recorder(), new Recorder()];
    const { publish } = passing(clients);
    publish(trade(1), trade(2), trade(3));
    await vi.waitFor(() => expect(clients.map((c) => c.got)).toEqual([[[1, 2, 3]], [[1, 2, 3]]]));
    expect(clients.map((c) => c.sentSeq)).toEqual([3, 3]);
  });

  it('owes a client that is not ready nothing from before, and gives a closed one nothing', async () => {
    const early = new Recorder();
    early.ready = false;
    const closed = new Recorder();
    closed.closed = true;
    const witness = new Recorder();
    const { publish } = passing([early, closed, witness]);
    publish(trade(1));
    await vi.waitFor(() => expect(witness.got).toEqual([[1]]));
    expect(early.sentSeq).toBe(1);
    early.ready = true;
    publish(trade(2));
    await vi.waitFor(() => expect(witness.got).toEqual([[1], [2]]));
    expect(early.got).toEqual([[2]]);
    expect(closed.got).toEqual([]);
  });

  it('tells a client owed events the ring no longer holds that it fell behind', async () => {
    const late = new Recorder();
    const witness = new Recorder();
    const ring = new EventRing(2);
    for (let i = 1; i <= 4; i++) ring.publish(trade(i));
    witness.sentSeq = 3;
    const { publish } = passing([late, witness], 0, ring);
    publish(trade(5));
    // The ring holds 4 and 5: a client given 3 lacks only what is held, one given nothing lacks 1 to 3 too.
    await vi.waitFor(() => expect(witness.got).toEqual([[4, 5]]));
    expect(late.behinds).toBe(1);
    expect(late.got).toEqual([]);
  });

  it('writes to a client at most once per flush interval, the events meanwhile together', async () => {
    const client = new Recorder();
    const { publish } = passing([client], 40);
    client.onDeliver = () => {
      client.onDeliver = undefined;
      setTimeout(() => publish(trade(2), trade(3)), 0);
    };
    publish(trade(1));
    await vi.waitFor(() => expect(client.got).toEqual([[1], [2, 3]]));
    // The pass reads the clock once per turn, the recorder at each delivery, a little later: its first reading may
    // fall in the next millisecond, so the interval it sees may be one short.
    expect(client.at[1] - client.at[0]).toBeGreaterThanOrEqual(39);
  });

  it('brings a pass waiting for a client to be due forward when an event comes, for the clients that are due', async () => {
    const written = new Recorder();
    const fresh = new Recorder();
    const clients: StreamClient[] = [written];
    const { publish } = passing(clients, 300);
    written.onDeliver = () => {
      written.onDeliver = undefined;
      // Read during the turn: the pass then waits for `written` to be due, 300 ms on.
      publish(trade(2));
      setTimeout(() => {
        clients.push(fresh);
        publish(trade(3));
      }, 0);
    };
    publish(trade(1));
    await vi.waitFor(() => expect(fresh.got).toEqual([[1, 2, 3]]));
    expect(fresh.at[0] - written.at[0]).toBeLessThan(150);
    expect(written.got).toEqual([[1]]);
    await vi.waitFor(() => expect(written.got).toEqual([[1], [2, 3]]));
    // As above: the recorder's first reading may trail the pass's by a millisecond.
    expect(written.at[1] - written.at[0]).toBeGreaterThanOrEqual(299);
  });

  it('comes back to a client still taking its last write', async () => {
    const busy = new Recorder();
    busy.writing = true;
    const witness = new Recorder();
    const { publish } = passing([busy, witness], 5);
    publish(trade(1));
    await vi.waitFor(() => expect(witness.got).toEqual([[1]]));
    expect(busy.got).toEqual([]);
    busy.writing = false;
    await vi.waitFor(() => expect(busy.got).toEqual([[1]]));
  });

  it('yields after each SLICE clients, so an event read meanwhile reaches the clients not yet written to with the rest', async () => {
    const clients = Array.from({ length: SLICE * 2 + 2 }, () => new Recorder());
    const { publish } = passing(clients);
    clients[0].onDeliver = () => {
      clients[0].onDeliver = undefined;
      setTimeout(() => publish(trade(2)), 0);
    };
    publish(trade(1));
    await vi.waitFor(() => expect(clients.every((c) => c.sentSeq === 2)).toBe(true));
    expect(clients[0].got).toEqual([[1], [2]]);
    expect(clients[SLICE - 1].got).toEqual([[1], [2]]);
    expect(clients[SLICE * 2 + 1].got).toEqual([[1, 2]]);
  });
});
