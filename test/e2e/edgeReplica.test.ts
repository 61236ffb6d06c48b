/**
 * Edge replicas end to end: the link objects of a platform keep its hot cached tables from the broker's change stream
 * and answer the commonest reads themselves. A change made on the simulator shows in a cached read answered at the edge
 * (the link object's replica counts the answer); and what the edge answers from its replica is byte for byte what the
 * broker path answers (the broker's frame for the same call, shaped as the link object shapes it), for v2 envelopes,
 * v1 bare bodies and not-found answers of both. The replicas here hold at most 150 rows of a table in memory, so the
 * demo worlds' accounts and open trades are kept in the link objects' SQLite storage: their records and pages are
 * answered from there, and a whole stored table is left to the broker.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalog } from '../../shared/catalog/index.js';
import type { Family } from '../../shared/protocol.js';
import { TestLink } from '../support/broker/linkClient.js';
import { ManagerClient } from '../support/sim/managerClient.js';
import { DEFAULT_LINKS_PER_PLATFORM, pickLink } from '../../workers/gateway/names.js';
import { shapeAnswer } from '../../workers/gateway/shapeAnswer.js';
import type { ReplicaStats } from '../../workers/gateway/edgeReplica.js';
import { eventually, stackForFile, type Client } from './support.js';
import { objectCall } from '../../launcher/edge.js';
import { LOCAL_HOME } from '../support/edge.js';

const PASSWORD = randomBytes(18).toString('base64url');
const BROKER_SECRET = randomBytes(24).toString('base64url');
process.env.SIM_MANAGER_PASSWORD = PASSWORD;
process.env.BROKER_SECRET = BROKER_SECRET;
/** Rows a replica's table may hold in memory here: fewer than the demo worlds' accounts and open trades. */
const MEMORY_ROWS = 150;
const managers = [
  { login: 1000, password: PASSWORD },
  { login: 1001, password: PASSWORD },
];
const setup = stackForFile({
  simConfig: {
    servers: [
      { name: 'demo-pf4', family: 'PF4', ticksPerSecond: 0, managers },
      { name: 'demo-pf5', family: 'PF5', ticksPerSecond: 0, managers },
    ],
  },
  edgeVars: { EDGE_REPLICA_MAX_ROWS: String(MEMORY_ROWS) },
});

let c: Client;
let sim: ManagerClient;
let broker: TestLink;

beforeAll(async () => {
  c = setup.client;
  sim = await ManagerClient.connect(c.stack.sim.port, 'demo-pf4');
  await sim.ok('login', { login: 1001, password: PASSWORD, pump: false });
  broker = await TestLink.open(Number(new URL(c.stack.brokerUrl).port), BROKER_SECRET);
});
afterAll(async () => {
  sim?.close();
  await broker?.close();
});

/** A trace id, and the `traceparent` that makes the edge use it (so the link object it goes through is known). */
function trace(): { traceId: string; headers: Record<string, string> } {
  const traceId = randomBytes(16).toString('hex');
  return { traceId, headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` } };
}

/** The replica figures of the link object a trace id picks. */
async function replicaOf(platform: string, traceId: string): Promise<ReplicaStats | null> {
  const link = pickLink(platform, LOCAL_HOME.region, traceId, DEFAULT_LINKS_PER_PLATFORM);
  return (await objectCall<{ replica: ReplicaStats | null }>(c.stack.edge.miniflare, 'LINKS', link, 'stats')).replica;
}

/** Sends `path` with `traceId` until that trace's link object holds an in-sync replica (the first call opens its link). */
async function warm(platform: string, path: string, t: ReturnType<typeof trace>): Promise<void> {
  const synced = await eventually(
    async () => {
      await c.get(path, t.headers);
      return (await replicaOf(platform, t.traceId))?.inSync === true;
    },
    20_000,
    50,
  );
  expect(
    synced,
    `the replica of ${pickLink(platform, LOCAL_HOME.region, t.traceId, DEFAULT_LINKS_PER_PLATFORM)} in sync`,
  ).toBe(true);
}

/** GET through the edge with `t`'s trace: the answer's status and exact body text, and whether the replica answered it. */
async function viaEdge(
  platform: string,
  path: string,
  t: ReturnType<typeof trace>,
): Promise<{ status: number; body: string; atEdge: boolean }> {
  const before = (await replicaOf(platform, t.traceId))?.answered ?? 0;
  const res = await fetch(`${c.stack.edgeUrl}${path}`, {
    headers: { authorization: `Bearer ${c.token}`, ...t.headers },
  });
  const body = await res.text();
  const after = (await replicaOf(platform, t.traceId))?.answered ?? 0;
  return { status: res.status, body, atEdge: after === before + 1 };
}

/** What the link object answers on the broker path: the broker's frame for the call, shaped for the route. */
async function viaBroker(
  platform: string,
  operationId: string,
  args: Record<string, unknown>,
  traceId: string,
  family: Family,
) {
  const entry = catalog.find((e) => e.id === operationId)!;
  const { id: _id, ...result } = await broker.call(platform, entry.op, args);
  const shaped = shapeAnswer({ generation: entry.generation, family, paged: !!entry.paged, traceId }, result);
  return { status: shaped.status, body: shaped.body };
}

describe('edge replicas', () => {
  it('shows a change made on the simulator in a cached read answered at the edge', async () => {
    const pf4 = c.stack.platforms.pf4;
    const accounts = await c.get(`${c.v2pf4}/UsersRequest?limit=1`);
    const login = accounts.body.data[0].login as number;
    const path = `${c.v2pf4}/UserRecordGet/${login}`;
    const t = trace();
    await warm(pf4, path, t);

    const name = `Edge ${randomBytes(4).toString('hex')}`;
    await sim.ok('UserRecordUpdate', { login, record: { name } });
    // Polled on the condition itself: the cached read answered by the link object's replica carries the new name.
    let last: Awaited<ReturnType<typeof viaEdge>> | undefined;
    const seen = await eventually(
      async () => {
        last = await viaEdge(pf4, path, t);
        return last.atEdge && JSON.parse(last.body).data?.name === name;
      },
      10_000,
      10,
    );
    expect(seen, `last answer: ${JSON.stringify(last)}`).toBe(true);
    const envelope = JSON.parse(last!.body);
    expect(envelope.error).toBeNull();
    expect(envelope.meta.activityId).toBe(t.traceId);
    // The same account read live from the trading server agrees.
    const liveRead = await c.get(`${c.v2pf4}/UserRecordRequest/${login}`);
    expect(envelope.data).toStrictEqual(liveRead.body.data);
  });

  it('answers from the replica byte for byte what the broker path answers: v2 and v1, found and not found', async () => {
    const pf4 = c.stack.platforms.pf4;
    const pf5 = c.stack.platforms.pf5;
    const login = (await c.get(`${c.v2pf4}/UsersRequest?limit=1`)).body.data[0].login as number;
    const group = (await c.get(`${c.v2pf4}/GroupsGet`)).body.data[0].group as string;
    // A PF5 account as the broker's cache has it (every group's accounts, read over the broker link).
    const pf5Users = await broker.call(pf5, catalog.find((e) => e.id === 'v1.PF5.UserGetByGroup')!.op, { mask: '*' });
    const pf5Login = pf5Users.ok ? (pf5Users.data as Array<{ login: number }>)[0]?.login : undefined;
    expect(pf5Login).toBeDefined();
    const cases: Case[] = [
      {
        platform: pf4,
        family: 'PF4',
        id: 'v2.PF4.UserRecordGet',
        path: `${c.v2pf4}/UserRecordGet/${login}`,
        args: { login },
      },
      {
        platform: pf4,
        family: 'PF4',
        id: 'v2.PF4.UserRecordGet',
        path: `${c.v2pf4}/UserRecordGet/99999999`,
        args: { login: 99999999 },
      },
      {
        platform: pf4,
        family: 'PF4',
        id: 'v1.PF4.UserRecordGet',
        path: `${c.v1pf4}/UserRecordGet/${login}`,
        args: { login },
      },
      {
        platform: pf4,
        family: 'PF4',
        id: 'v1.PF4.UserRecordGet',
        path: `${c.v1pf4}/UserRecordGet/99999999`,
        args: { login: 99999999 },
      },
      { platform: pf4, family: 'PF4', id: 'v2.PF4.GroupsGet', path: `${c.v2pf4}/GroupsGet`, args: {} },
      {
        platform: pf4,
        family: 'PF4',
        id: 'v2.PF4.GroupSecGroupsGet',
        path: `${c.v2pf4}/GroupSecGroupsGet/${encodeURIComponent(group)}`,
        args: { group },
      },
      { platform: pf4, family: 'PF4', id: 'v2.PF4.TickInfoLast', path: `${c.v2pf4}/TickInfoLast`, args: {} },
      {
        platform: pf4,
        family: 'PF4',
        id: 'v2.PF4.SymbolInfoGet',
        path: `${c.v2pf4}/SymbolInfoGet?symbol=EURUSD`,
        args: { symbol: 'EURUSD' },
      },
      {
        platform: pf4,
        family: 'PF4',
        id: 'v2.PF4.SymbolInfoGet',
        path: `${c.v2pf4}/SymbolInfoGet?symbol=NOSUCH`,
        args: { symbol: 'NOSUCH' },
      },
      ...(pf5Login === undefined
        ? []
        : [
            {
              platform: pf5,
              family: 'PF5' as const,
              id: 'v2.PF5.UserGet',
              path: `${c.v2pf5}/UserGet/${pf5Login}`,
              args: { login: pf5Login },
            },
          ]),
    ];
    await expectSameAnswers(cases, true);
  });

  it('keeps tables past the memory bound in storage: records and pages from there, a whole table from the broker', async () => {
    const pf4 = c.stack.platforms.pf4;
    const t = trace();
    await warm(pf4, `${c.v2pf4}/TradesGet?limit=1`, t);
    const stats = (await replicaOf(pf4, t.traceId))!;
    expect(stats.stored).toStrictEqual(expect.arrayContaining(['users', 'trades']));
    expect(stats.tables.users).toBeGreaterThan(MEMORY_ROWS);
    expect(stats.tables.trades).toBeGreaterThan(MEMORY_ROWS);
    expect(stats.stored).not.toContain('groups');

    // Page after page of the open trades, each cursor the one the answer before gave.
    const pages: Array<{ cursor: string | null; count: number }> = [];
    let cursor: string | null = null;
    let tickets: number[] = [];
    do {
      const query: string = cursor === null ? 'limit=120' : `limit=120&cursor=${cursor}`;
      const args: Record<string, unknown> = cursor === null ? { limit: 120 } : { limit: 120, cursor };
      await expectSameAnswers(
        [{ platform: pf4, family: 'PF4', id: 'v2.PF4.TradesGet', path: `${c.v2pf4}/TradesGet?${query}`, args }],
        true,
      );
      const page = JSON.parse((await viaEdge(pf4, `${c.v2pf4}/TradesGet?${query}`, t)).body);
      tickets = tickets.concat((page.data as Array<{ order: number }>).map((r) => r.order));
      pages.push({ cursor, count: page.data.length });
      cursor = page.meta.paging.nextCursor as string | null;
    } while (cursor !== null && pages.length < 10);
    expect(pages.length).toBe(Math.ceil(stats.tables.trades / 120));
    expect(tickets).toStrictEqual([...tickets].sort((a, b) => a - b));
    expect(new Set(tickets).size).toBe(stats.tables.trades);

    const ticket = tickets[7];
    await expectSameAnswers(
      [
        {
          platform: pf4,
          family: 'PF4',
          id: 'v2.PF4.TradesGetTicket',
          path: `${c.v2pf4}/TradesGet/${ticket}`,
          args: { ticket },
        },
        {
          platform: pf4,
          family: 'PF4',
          id: 'v2.PF4.TradesGetTicket',
          path: `${c.v2pf4}/TradesGet/99999999`,
          args: { ticket: 99999999 },
        },
        {
          platform: pf4,
          family: 'PF4',
          id: 'v2.PF4.TradeRecordGet',
          path: `${c.v2pf4}/TradeRecordGet/${ticket}`,
          args: { order: ticket },
        },
      ],
      true,
    );
    // A whole stored table, and a cursor not as the broker writes it, are the broker's to answer.
    await expectSameAnswers(
      [
        { platform: pf4, family: 'PF4', id: 'v1.PF4.UsersGet', path: `${c.v1pf4}/UsersGet`, args: {} },
        { platform: pf4, family: 'PF4', id: 'v2.PF4.TradesGet', path: `${c.v2pf4}/TradesGet`, args: {} },
        {
          platform: pf4,
          family: 'PF4',
          id: 'v2.PF4.TradesGet',
          path: `${c.v2pf4}/TradesGet?limit=5&cursor=IjEi`,
          args: { limit: 5, cursor: 'IjEi' },
        },
      ],
      false,
    );
  });
});

interface Case {
  platform: string;
  family: Family;
  id: string;
  path: string;
  args: Record<string, unknown>;
}

/** Each case answered through the edge (by its replica when `atEdge`) exactly as the broker path answers it. */
async function expectSameAnswers(cases: Case[], atEdge: boolean): Promise<void> {
  for (const k of cases) {
    const entry = catalog.find((e) => e.id === k.id);
    expect(entry, k.id).toBeDefined();
    const t = trace();
    await warm(k.platform, k.path, t);
    const edge = await viaEdge(k.platform, k.path, t);
    expect(edge.atEdge, `${k.id} ${k.path} answered by the replica: ${atEdge}`).toBe(atEdge);
    expect(edge, `${k.id} ${k.path}`).toStrictEqual({
      ...(await viaBroker(k.platform, k.id, k.args, t.traceId, k.family)),
      atEdge,
    });
  }
}
