/**
 * Edge replicas against the real broker and simulator: a link opens `/link`, asks for a replication, and feeds the
 * pushed frames into the edge's `EdgeReplica` as a link object does. Checked: every replicated operation of both
 * families answers from the replica byte for byte as the broker path does (envelope, v1 bare body, not-found), for
 * every cached key and a missing one; changes made on the simulator reach the replica in order; a resync is a new
 * snapshot; a gap in the frames, a stop or the link's loss leaves the replica out of sync (reads fall through); and the
 * row bound keeps a table that does not fit out of the replica, at the snapshot and when it grows past the bound.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { catalog, type Operation } from '../../shared/catalog/index.js';
import type { CallFrame, ResultFrame } from '../../shared/frames.js';
import type { Family } from '../../shared/protocol.js';
import { REPLICATE_OP, type ReplicaFrame } from '../../shared/replication.js';
import { startSim, type RunningSim } from '../../sim/index.js';
import { ManagerClient, postControl } from '../../test/support/sim/managerClient.js';
import { EdgeReplica, replicaPlan, type ReplicaPlan } from '../../workers/gateway/edgeReplica.js';
import { shapeAnswer } from '../../workers/gateway/shapeAnswer.js';
import type { ShapeContext } from '../../workers/envelope/envelope.js';
import { startBroker, type RunningBroker } from '../index.js';
import { eventually } from '../../test/support/broker/linkClient.js';

const PASSWORD = 'replica-password';
const SECRET = 'replica-secret';
const PF4 = '7b1c3d1e-2f4b-4c5d-8e6f-7a8b9c0d0e41';
const PF5 = '7b1c3d1e-2f4b-4c5d-8e6f-7a8b9c0d0e51';

let sim: RunningSim;
let broker: RunningBroker;
let live: ManagerClient;

/** An edge link as a link object holds it: numbered calls answered by id, pushed frames handed to `onPush`. */
class Link {
  private nextId = 1;
  private readonly waiting = new Map<number, (text: string) => void>();
  onPush: (frame: ReplicaFrame) => void = () => {};
  /** Drops pushed frames whose seq is listed (a gap, as a lost frame would make). */
  readonly skip = new Set<number>();

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const text = (data as Buffer).toString();
      const frame = JSON.parse(text) as { id?: number; rep?: number; seq?: number };
      if (typeof frame.id === 'number') {
        this.waiting.get(frame.id)?.(text);
        this.waiting.delete(frame.id);
      } else if (typeof frame.rep === 'number' && !this.skip.has(frame.seq!)) {
        this.onPush(frame as ReplicaFrame);
      }
    });
  }

  static open(): Promise<Link> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${broker.port}/link`, {
        headers: { authorization: `Bearer ${SECRET}` },
      });
      const link = new Link(ws);
      ws.once('open', () => resolve(link));
      ws.once('error', reject);
    });
  }

  call(frame: Omit<CallFrame, 'id'>): Promise<string> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.ws.send(JSON.stringify({ ...frame, id }));
    });
  }

  close(): void {
    this.ws.close();
  }
}

/** A replica fed by `link`, as a link object keeps one; resolves once its first snapshot landed. */
async function replicaOver(
  link: Link,
  platform: string,
  family: Family,
  maxRows = 10_000,
  rep = 1,
): Promise<EdgeReplica> {
  const replica = new EdgeReplica(family, maxRows);
  replica.expect(rep);
  link.onPush = (frame) => {
    replica.apply(frame);
  };
  const answer = JSON.parse(await link.call({ platform, op: REPLICATE_OP, args: { rep, maxRows }, timeoutMs: 5000 }));
  expect(answer.ok).toBe(true);
  await eventually(() => replica.inSync);
  return replica;
}

/** What the link object answers on the broker path: the broker's frame for the call, shaped. */
async function brokerAnswer(
  link: Link,
  platform: string,
  entry: Operation,
  args: Record<string, unknown>,
  ctx: ShapeContext,
) {
  const frame = JSON.parse(
    await link.call({ platform, op: entry.op, args, timeoutMs: 5000, traceId: ctx.traceId }),
  ) as ResultFrame;
  const { id: _id, ...result } = frame;
  return shapeAnswer(ctx, result);
}

const cache = (platform: string) => broker.platforms.get(platform)!.cache;
const TRACE = '0af7651916cd43dd8448eb211c80319c';
const ctxOf = (entry: Operation, family: Family): ShapeContext => ({
  generation: entry.generation,
  family,
  paged: !!entry.paged,
  traceId: TRACE,
});

beforeAll(async () => {
  sim = await startSim({
    config: {
      servers: [
        {
          name: 'rep-pf4',
          family: 'PF4',
          accounts: 40,
          trades: 30,
          symbols: 6,
          ticksPerSecond: 0,
          managers: [{ login: 1000, password: PASSWORD }],
        },
        {
          name: 'rep-pf5',
          family: 'PF5',
          accounts: 20,
          ticksPerSecond: 0,
          managers: [{ login: 1000, password: PASSWORD }],
        },
      ],
    },
  });
  broker = await startBroker({
    secret: SECRET,
    platforms: [
      { id: PF4, family: 'PF4', server: `ws://127.0.0.1:${sim.port}/rep-pf4`, login: 1000, password: PASSWORD },
      { id: PF5, family: 'PF5', server: `ws://127.0.0.1:${sim.port}/rep-pf5`, login: 1000, password: PASSWORD },
    ],
    session: { backoff: { baseMs: 50, capMs: 300 } },
  });
  await eventually(() => cache(PF4).ready && cache(PF5).ready, 10_000);
  live = await ManagerClient.connect(sim.port, 'rep-pf4');
  await live.ok('login', { login: 1000, password: PASSWORD, pump: false });
}, 30_000);
afterAll(async () => {
  live?.close();
  await broker?.close();
  await sim?.close();
});

const replicated = catalog
  .map((entry) => ({ entry, plan: replicaPlan(entry) }))
  .filter((e): e is { entry: Operation; plan: ReplicaPlan } => e.plan !== undefined);

/** The keys a record read is checked with: every cached one (up to 25) and one no table holds, of the same type. */
function keysOf(platform: string, plan: Extract<ReplicaPlan, { kind: 'record' }>): Array<number | string> {
  const table = cache(platform).table(plan.tables[0])!;
  const keys = [...table.values()].slice(0, 25).map((row) => table.keyOf(row) as number | string);
  return [...keys, typeof keys[0] === 'number' ? 987_654_321 : 'NO-SUCH-KEY'];
}

/**
 * A broker answer without its change-stream position: the replica's read answers the same bytes, and the link object
 * names the replica's own position beside them. A success of the broker always names one.
 */
function sansPosition<T extends { status: number; headers: Record<string, string> }>(shaped: T): T {
  const { 'X-Gateway-Position': pos, ...headers } = shaped.headers;
  if (pos !== undefined) expect(pos).toMatch(/^\d+-\d+$/);
  return { ...shaped, headers };
}

describe('edge replica', () => {
  it('answers every replicated operation byte for byte as the broker path, found and not found, v2 and v1', async () => {
    // The hot operations are all here: accounts, quotes, symbols and groups of both families, v2 and v1.
    expect(replicated.map((e) => e.entry.id)).toEqual(
      expect.arrayContaining([
        'v2.PF4.UserRecordGet',
        'v2.PF4.TickInfoLastSymbol',
        'v2.PF4.TickInfoLast',
        'v2.PF4.SymbolInfoGet',
        'v2.PF4.GroupsGet',
        'v2.PF4.GroupRecordGet',
        'v2.PF4.GroupSecGroupsGet',
        'v1.PF4.UsersGet',
        'v1.PF4.UserRecordGet',
        'v2.PF5.UserGet',
        'v1.PF5.SymbolGet',
      ]),
    );
    const link = await Link.open();
    try {
      const replicas = {
        PF4: await replicaOver(link, PF4, 'PF4'),
        PF5: await replicaOver(link, PF5, 'PF5', 10_000, 2),
      };
      let compared = 0;
      let notFound = 0;
      for (const { entry, plan } of replicated) {
        const platform = plan.family === 'PF4' ? PF4 : PF5;
        const ctx = ctxOf(entry, plan.family);
        const argsList = plan.kind === 'list' ? [{}] : keysOf(platform, plan).map((key) => ({ [plan.key]: key }));
        for (const args of argsList) {
          const expected = await brokerAnswer(link, platform, entry, args, ctx);
          const local = replicas[plan.family].read(plan, args);
          expect(local, `${entry.id} ${JSON.stringify(args)} answered from the replica`).toBeDefined();
          expect(shapeAnswer(ctx, local!), `${entry.id} ${JSON.stringify(args)}`).toStrictEqual(sansPosition(expected));
          compared++;
          if (!local!.ok) notFound++;
        }
      }
      expect(compared).toBeGreaterThan(100);
      expect(notFound).toBeGreaterThanOrEqual(replicated.filter((e) => e.plan.kind === 'record').length);
    } finally {
      link.close();
    }
  });

  it("follows the simulator's changes in order, and a resync is a new snapshot", async () => {
    const link = await Link.open();
    try {
      const replica = await replicaOver(link, PF4, 'PF4');
      const user = catalog.find((e) => e.id === 'v2.PF4.UserRecordGet')!;
      const tick = catalog.find((e) => e.id === 'v2.PF4.SymbolInfoGet')!;
      const [userPlan, tickPlan] = [replicaPlan(user)!, replicaPlan(tick)!];
      const login = cache(PF4).table('users')!.values().next().value!.login as number;
      const name = `Replica ${Date.now() % 100_000}`;
      await live.ok('UserRecordUpdate', { login, record: { name } });
      await live.ok('SymbolSendTick', { symbol: 'EURUSD', bid: 1.1111, ask: 1.1113 });
      await eventually(() => {
        const a = replica.read(userPlan, { login });
        const b = replica.read(tickPlan, { symbol: 'EURUSD' });
        return a?.ok && a.dataJson.includes(`"name":"${name}"`) && b?.ok && b.dataJson.includes('"bid":1.1111');
      });
      for (const [entry, args] of [
        [user, { login }],
        [tick, { symbol: 'EURUSD' }],
      ] as const) {
        const ctx = ctxOf(entry, 'PF4');
        expect(shapeAnswer(ctx, replica.read(replicaPlan(entry)!, args)!)).toStrictEqual(
          sansPosition(await brokerAnswer(link, PF4, entry, args, ctx)),
        );
      }

      // A dropped manager connection is followed by a resync: the replica takes a second snapshot and agrees again.
      const resyncs = cache(PF4).resyncs;
      await postControl(sim.port, 'rep-pf4/drop', {});
      await eventually(() => cache(PF4).resyncs > resyncs && replica.stats().snapshots === 2 && replica.inSync, 10_000);
      live = await ManagerClient.connect(sim.port, 'rep-pf4');
      await live.ok('login', { login: 1000, password: PASSWORD, pump: false });
      expect(replica.stats().tables.users).toBe(cache(PF4).table('users')!.size);
      const ctx = ctxOf(user, 'PF4');
      expect(shapeAnswer(ctx, replica.read(userPlan, { login })!)).toStrictEqual(
        sansPosition(await brokerAnswer(link, PF4, user, { login }, ctx)),
      );
    } finally {
      link.close();
    }
  });

  it('falls out of sync on a gap in the frames, and reads fall through until a new replication lands', async () => {
    const link = await Link.open();
    try {
      const replica = await replicaOver(link, PF4, 'PF4');
      const plan = replicaPlan(catalog.find((e) => e.id === 'v2.PF4.SymbolInfoGet')!)!;
      expect(replica.read(plan, { symbol: 'EURUSD' })?.ok).toBe(true);
      // The next frame (the first change after the snapshot) is lost on the way: the one after it is out of order.
      const next = (replica as unknown as { nextSeq: number }).nextSeq;
      link.skip.add(next);
      await live.ok('SymbolSendTick', { symbol: 'EURUSD', bid: 1.2221, ask: 1.2223 });
      await live.ok('SymbolSendTick', { symbol: 'GBPUSD', bid: 1.3331, ask: 1.3333 });
      await eventually(() => !replica.inSync);
      expect(replica.read(plan, { symbol: 'EURUSD' })).toBeUndefined();
      expect(replica.stats().lost).toBe(1);

      // A new replication on the same link replaces the old one; its snapshot has both ticks.
      link.skip.clear();
      const again = await replicaOver(link, PF4, 'PF4', 10_000, 7);
      const eur = again.read(plan, { symbol: 'EURUSD' });
      expect(eur?.ok && eur.dataJson).toContain('"bid":1.2221');
    } finally {
      link.close();
    }
  });

  it('keeps a table past the row bound out of the replica: at the snapshot, and when it grows past it', async () => {
    const link = await Link.open();
    try {
      const users = cache(PF4).table('users')!.size;
      const userPlan = replicaPlan(catalog.find((e) => e.id === 'v2.PF4.UserRecordGet')!)!;
      const tickPlan = replicaPlan(catalog.find((e) => e.id === 'v2.PF4.TickInfoLastSymbol')!)!;
      const small = await replicaOver(link, PF4, 'PF4', users - 1);
      expect(small.stats().tables.users).toBeUndefined();
      expect(small.read(userPlan, { login: 1 })).toBeUndefined();
      expect(small.read(tickPlan, { symbol: 'EURUSD' })?.ok).toBe(true);

      // Exactly at the bound: replicated, until one more account is made.
      const exact = await replicaOver(link, PF4, 'PF4', users, 2);
      expect(exact.stats().tables.users).toBe(users);
      const group = (cache(PF4).table('users')!.values().next().value as { group: string }).group;
      await live.ok('UserRecordNew', { record: { group, name: 'One Too Many' } });
      await eventually(() => exact.stats().tables.users === undefined);
      expect(exact.inSync).toBe(true);
      expect(exact.read(userPlan, { login: 1 })).toBeUndefined();
      expect(exact.read(tickPlan, { symbol: 'EURUSD' })?.ok).toBe(true);
    } finally {
      link.close();
    }
  });

  it("ends a link's replications with the link, and the replica left behind answers nothing", async () => {
    const link = await Link.open();
    const replica = await replicaOver(link, PF4, 'PF4');
    const feed = broker.platforms.get(PF4)!.feed;
    const listeners = feed.listenerCount;
    link.close();
    await eventually(() => feed.listenerCount === listeners - 1);
    // What the link object does when its link drops.
    replica.reset();
    expect(replica.inSync).toBe(false);
    expect(replica.read(replicaPlan(catalog.find((e) => e.id === 'v2.PF4.TickInfoLast')!)!, {})).toBeUndefined();
  });

  it('refuses a replication of a platform the broker does not serve', async () => {
    const link = await Link.open();
    try {
      const answer = JSON.parse(
        await link.call({
          platform: '00000000-0000-4000-8000-000000000000',
          op: REPLICATE_OP,
          args: { rep: 1, maxRows: 10 },
          timeoutMs: 1000,
        }),
      );
      expect(answer).toMatchObject({ ok: false, error: { code: 'NotFound' } });
    } finally {
      link.close();
    }
  });
});
