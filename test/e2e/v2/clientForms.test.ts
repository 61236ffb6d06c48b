/**
 * What stock clients send in paths and queries, end to end, through plain `fetch` with the URL exactly as such a client
 * builds it: a group name put into the path unencoded (the URL parser turns its backslash into `/`), lists comma-joined,
 * enum names in another case (`MN1`) and enums and flag sets by number. Each is checked against the same request in
 * the documented form and against the simulator's state.
 */
import { describe, expect, it } from 'vitest';
import { DEMO_PF4_SERVER } from '../../../launcher/demo.js';
import { stackAndManagerForFile, type Envelope } from '../support.js';

const setup = stackAndManagerForFile(DEMO_PF4_SERVER);
type Rec = Record<string, any>;

/** A request as a client sends it: the path pasted into the URL text as is, no encoding of its own. */
async function send<T = any>(
  method: string,
  pathAndQuery: string,
  init: { body?: unknown; headers?: Record<string, string> } = {},
) {
  const { client } = setup;
  const res = await fetch(`${client.stack.edgeUrl}${pathAndQuery}`, {
    method,
    headers: {
      authorization: `Bearer ${client.token}`,
      ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...init.headers,
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Envelope<T> };
}
const v2 = () => setup.client.v2pf4;
const v1 = () => setup.client.v1pf4;
/** The data of a successful v2 answer. */
async function data<T = any>(method: string, pathAndQuery: string, init?: Parameters<typeof send>[2]): Promise<T> {
  const r = await send<T>(method, pathAndQuery, init);
  expect(r.status, pathAndQuery).toBe(200);
  expect(r.body.error, pathAndQuery).toBeNull();
  return r.body.data as T;
}

describe('a group name in the path, not percent-encoded', () => {
  it('reads a backslash the URL parser made a slash as the backslash, on every kind of group route', async () => {
    const { manager } = setup;
    const server = await manager.ok<Rec>('GroupRecordRequest', { group: 'demo\\forex' });
    // As the client writes it: the backslash in the URL text, which fetch's URL parser turns into '/'.
    const unencoded = await data<Rec>('GET', `${v2()}/GroupRecordGet/demo\\forex`);
    expect(unencoded.group).toBe('demo\\forex');
    expect(unencoded.company).toBe(server.company);
    expect(await data<Rec>('GET', `${v2()}/GroupRecordGet/demo/forex`)).toStrictEqual(unencoded);
    expect(await data<Rec>('GET', `${v2()}/GroupRecordGet/demo%5Cforex`)).toStrictEqual(unencoded);

    expect(await data<boolean>('GET', `${v2()}/EnsureGroupNameExist/real\\vip`)).toBe(true);
    expect(await data<boolean>('GET', `${v2()}/EnsureGroupNameExist/real\\nope`)).toBe(false);
    const secGroups = await data<Rec[]>('GET', `${v2()}/GroupSecGroupsGet/real\\vip`);
    expect(secGroups).toHaveLength(32);
    expect(await data<Rec[]>('GET', `${v2()}/GroupSecGroupsGet/real%5Cvip`)).toStrictEqual(secGroups);

    const users = await data<Rec[]>('GET', `${v2()}/AdmUsersRequestSafe/demo\\pro`);
    const serverUsers = await manager.ok<Rec[]>('AdmUsersRequestSafe', { group: 'demo\\pro' });
    expect(serverUsers.length).toBeGreaterThan(0);
    expect(users.map((u) => u.login).sort()).toStrictEqual(serverUsers.map((u) => u.login).sort());
    expect(users.every((u) => u.group === 'demo\\pro')).toBe(true);

    // A group after a login: the login is the segment before the group's.
    const login = serverUsers[0].login as number;
    expect(await data<Rec[]>('GET', `${v2()}/TradesGetByLogin/${login}/demo\\pro`)).toStrictEqual(
      await data<Rec[]>('GET', `${v2()}/TradesGetByLogin/${login}/demo%5Cpro`),
    );

    // PF5 group names hold backslashes too.
    const pf5 = await data<Rec>('GET', `${setup.client.v2pf5}/GroupGet/demo\\retail`);
    expect(pf5.group).toBe('demo\\retail');
  });

  it('refuses a split group whose backslash form is too long, naming the group', async () => {
    const r = await send('GET', `${v2()}/GroupRecordGet/demoforex\\abcdefgh`);
    expect(r.body.error).toStrictEqual({
      code: 'Validation',
      managerCode: null,
      message: 'group: group must be at most 16 characters',
    });
  });

  it('keeps a group followed by another parameter to one segment: encoded it is read, unencoded it is no route', async () => {
    const encoded = await send<Rec[]>('GET', `${v1()}/AdmTradesRequest/demo%5Cpro/true`);
    expect(encoded.status).toBe(200);
    expect(Array.isArray(encoded.body)).toBe(true);
    const split = await send('GET', `${v1()}/AdmTradesRequest/demo\\pro/true`);
    expect(split.status).toBe(404);
  });

  it('changes the group named by the split form, and an Idempotency-Key sent with both forms replays instead of conflicting', async () => {
    const { manager } = setup;
    const key = `client-forms-${Date.now()}`;
    const headers = { 'idempotency-key': key };
    const first = await send<Rec>('POST', `${v2()}/GroupRecordUpdate/real\\standard`, {
      body: { company: 'Split Form Co' },
      headers,
    });
    expect(first.body.error).toBeNull();
    expect(first.body.data!.group).toBe('real\\standard');
    expect(first.headers.get('idempotency-replayed')).toBeNull();
    expect((await manager.ok<Rec>('GroupRecordRequest', { group: 'real\\standard' })).company).toBe('Split Form Co');

    const again = await send<Rec>('POST', `${v2()}/GroupRecordUpdate/real%5Cstandard`, {
      body: { company: 'Split Form Co' },
      headers,
    });
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(again.body).toStrictEqual(first.body);

    // Another group under the key is another request.
    const other = await send('POST', `${v2()}/GroupRecordUpdate/real\\vip`, {
      body: { company: 'Split Form Co' },
      headers,
    });
    expect(other.body.error).toMatchObject({
      code: 'Validation',
      message: 'Idempotency-Key: already used with a different request',
    });
  });
});

describe('lists in the query, comma-joined', () => {
  it('reads comma-joined, repeated and mixed lists as the same list', async () => {
    const { manager } = setup;
    const logins = (await manager.ok<Rec[]>('AdmUsersRequestSafe', { group: 'demo\\forex' }))
      .slice(0, 3)
      .map((u) => u.login as number);
    expect(logins).toHaveLength(3);
    const [a, b, c] = logins;
    const byLogin = (users: Rec[]) => users.map((u) => u.login).sort((x, y) => x - y);
    const expected = [...logins].sort((x, y) => x - y);
    expect(byLogin(await data<Rec[]>('GET', `${v2()}/UserRecordsRequest?logins=${a},${b},${c}`))).toStrictEqual(
      expected,
    );
    expect(byLogin(await data<Rec[]>('GET', `${v2()}/UserRecordsRequest?logins=${a},${b}&logins=${c}`))).toStrictEqual(
      expected,
    );
    expect(
      byLogin(await data<Rec[]>('GET', `${v2()}/UserRecordsRequest?logins=${a}&logins=${b}&logins=${c}`)),
    ).toStrictEqual(expected);
    const report = `${v2()}/ReportsRequest?from=2020-01-01T00:00:00Z&to=2030-01-01T00:00:00Z`;
    expect(await data<Rec[]>('GET', `${report}&logins=${a},${b}`)).toStrictEqual(
      await data<Rec[]>('GET', `${report}&logins=${a}&logins=${b}`),
    );
  });

  it('checks every element with the same bounds and names the one that is wrong', async () => {
    const refusal = async (query: string) => (await send('GET', `${v2()}/UserRecordsRequest?${query}`)).body.error;
    expect(await refusal('logins=100,abc')).toStrictEqual({
      code: 'Validation',
      managerCode: null,
      message: 'logins.1: logins must be a positive integer',
    });
    expect(await refusal('logins=100,200&logins=0')).toStrictEqual({
      code: 'Validation',
      managerCode: null,
      message: 'logins.2: logins must be at least 1',
    });
    expect(await refusal('logins=2147483648')).toStrictEqual({
      code: 'Validation',
      managerCode: null,
      message: 'logins.0: logins must be at most 2147483647',
    });
  });
});

describe('enum values in another case and by number', () => {
  const window = 'start=2023-01-01T00:00:00Z&end=2023-12-31T23:59:59Z';

  it('reads period MN1 as Mn1, on a chart write and its read, and lower-case modes', async () => {
    const { manager } = setup;
    const bar = { time: '2023-03-01T00:00:00.000Z', open: 1.05, high: 1.09, low: 1.04, close: 1.08, volume: 100 };
    expect(await data('POST', `${v2()}/ChartAdd/GBPUSD?period=mn1`, { body: { rates: [bar] } })).toBe(true);
    expect(
      await manager.ok('ChartRequest', {
        symbol: 'GBPUSD',
        period: 'Mn1',
        start: '2023-01-01T00:00:00Z',
        end: '2023-12-31T23:59:59Z',
      }),
    ).toEqual([bar]);
    expect(await data('GET', `${v2()}/ChartRequest/GBPUSD?period=MN1&${window}`)).toEqual([bar]);
    expect(await data('GET', `${v2()}/ChartRequest/GBPUSD?period=MN1&${window}&mode=rangein`)).toEqual([bar]);
    expect(await data('POST', `${v2()}/ChartDelete/GBPUSD?period=MN1`, { body: { rates: [{ time: bar.time }] } })).toBe(
      true,
    );
    expect(await data('GET', `${v2()}/ChartRequest/GBPUSD?period=Mn1&${window}`)).toEqual([]);
  });

  it('refuses a period by number (its number is not given) and names the members', async () => {
    const r = await send('GET', `${v2()}/ChartRequest/GBPUSD?period=43200`);
    expect(r.body.error).toStrictEqual({
      code: 'Validation',
      managerCode: null,
      message: 'period: period must be one of M1, M5, M15, M30, H1, H4, D1, W1, Mn1',
    });
  });

  it('reads the journal mode by its number (4 is Full) and in any case', async () => {
    const to = new Date().toISOString();
    const full = await data<Rec[]>('GET', `${v2()}/JournalRequest?to=${to}&mode=Full`);
    expect(full.length).toBeGreaterThan(0);
    expect(await data('GET', `${v2()}/JournalRequest?to=${to}&mode=4`)).toStrictEqual(full);
    expect(await data('GET', `${v2()}/JournalRequest?to=${to}&mode=FULL`)).toStrictEqual(full);
    const logins = await data<Rec[]>('GET', `${v2()}/JournalRequest?to=${to}&mode=Logins`);
    expect(await data('GET', `${v2()}/JournalRequest?to=${to}&mode=1`)).toStrictEqual(logins);
  });

  it('reads tick request flags by their bits in the query and in a v1 path, 0 as the default All', async () => {
    const end = new Date().toISOString();
    const ticks = `${v2()}/TicksRequest/EURUSD?start=2020-01-01T00:00:00Z&end=${end}`;
    const all = await data<Rec[]>('GET', `${ticks}&flags=All`);
    expect(all.length).toBeGreaterThan(0);
    expect(await data('GET', `${ticks}&flags=0`)).toStrictEqual(all);
    expect(await data('GET', `${ticks}&flags=3`)).toStrictEqual(all);
    expect(await data('GET', `${ticks}&flags=all`)).toStrictEqual(all);
    const normal = await data<Rec[]>('GET', `${ticks}&flags=Normal`);
    expect(await data('GET', `${ticks}&flags=2`)).toStrictEqual(normal);
    expect(normal.every((t) => t.flags === 'Normal')).toBe(true);
    const refused = await send('GET', `${ticks}&flags=4`);
    expect(refused.body.error?.message).toBe(
      'flags: flags must be Raw, Normal, All or several of them joined by ", ", or the number of their bits (Raw 1, Normal 2)',
    );

    const inPath = await send('GET', `${v1()}/TicksRequest/EURUSD/2020-01-01T00:00:00Z/${end}/3`);
    expect(inPath.status).toBe(200);
    expect((inPath.body as unknown as Rec[]).length).toBe(all.length);
  });

  it('reads enum values in a body in any case and answers the contract spelling', async () => {
    const { manager } = setup;
    const r = await send<Rec>('PATCH', `${v2()}/GroupRecord/real\\ecn`, { body: { marginMode: 'useprofit' } });
    expect(r.body.error).toBeNull();
    expect(r.body.data!.marginMode).toBe('UseProfit');
    expect((await manager.ok<Rec>('GroupRecordRequest', { group: 'real\\ecn' })).marginMode).toBe('UseProfit');
  });
});
