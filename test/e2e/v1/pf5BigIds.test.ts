/**
 * PF5 64-bit ids beyond 2^53 − 1 end to end: kept exact from the request (path, query, JSON body) through the edge,
 * both links, the broker's cache and the manager protocol to the simulator and back, answered as bare digits. The
 * PF5 server here allocates logins from a range beyond 2^53 (UserAdd may take a supplied login there) and its order
 * and deal tickets start beyond it, so every position, order and deal it holds has such a ticket. Neighbouring ids
 * (9007199254740992 and 9007199254740993 share one double) must never be confused. Bodies are read from the raw
 * answer text with the lossless parser, so a rounded id would show.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJson } from '../../../shared/losslessJson.js';
import { ManagerClient } from '../../support/sim/managerClient.js';
import { eventually, stackForFile, type Client } from '../support.js';
import { operation as v2Operation, urlOf as v2UrlOf } from '../v2/api.js';
import { call, notFound, refuses, type CallOptions } from './api.js';
import { SseReader } from '../../support/sse.js';

const PASSWORD = randomBytes(18).toString('base64url');
process.env.SIM_MANAGER_PASSWORD = PASSWORD;
const managers = [{ login: 1000, password: PASSWORD }];
const FIRST_ORDER = 9007199254740993n;
const FIRST_DEAL = 9223372036850000001n;
const setup = stackForFile({
  simConfig: {
    servers: [
      { name: 'demo-pf4', family: 'PF4', ticksPerSecond: 0, managers },
      {
        name: 'demo-pf5',
        family: 'PF5',
        ticksPerSecond: 0,
        accounts: 60,
        trades: 60,
        orders: 15,
        managers,
        loginRange: { min: '9007199254740992', max: '9223372036854775807' },
        firstOrder: String(FIRST_ORDER),
        firstDeal: String(FIRST_DEAL),
      },
    ],
  },
});

type Row = Record<string, any>;

/** Two logins beyond 2^53 − 1; A's lower neighbour rounds to the same double as A and is never created. */
const A = 9007199254740993n;
const B = 9223372036854775001n;
const NEIGHBOUR = 9007199254740992n;
const GROUP = 'demo\\retail';

let c: Client;
let sim: ManagerClient;
beforeAll(async () => {
  c = setup.client;
  sim = await ManagerClient.connect(c.stack.sim.port, 'demo-pf5');
  await sim.ok('login', { login: 1000, password: PASSWORD, pump: false });
});
afterAll(() => sim?.close());

/** A v1 call whose answer is read exactly from its text (ids beyond 2^53 − 1 as bigints). */
async function exact<T = any>(
  id: string,
  options: CallOptions = {},
): Promise<{ status: number; text: string; value: T }> {
  const r = await call(c, id, options);
  return { status: r.status, text: r.text, value: parseJson(r.text) as T };
}

/** A v1 call that must succeed, read exactly. */
async function exactOk<T = any>(id: string, options: CallOptions = {}): Promise<{ text: string; value: T }> {
  const r = await exact<T>(id, options);
  expect(r.status, `${id}: ${r.text.slice(0, 300)}`).toBe(200);
  return r;
}

/** A v2 call that must succeed; answers the envelope's `data` and `meta` read exactly, and the text. */
async function v2Exact<T = any>(
  id: string,
  options: { params?: Record<string, string>; query?: Record<string, string | number> } = {},
) {
  const res = await fetch(`${c.stack.edgeUrl}${v2UrlOf(c, v2Operation(id), options)}`, {
    headers: { authorization: `Bearer ${c.token}` },
  });
  const text = await res.text();
  expect(res.status, text.slice(0, 300)).toBe(200);
  const envelope = parseJson(text) as {
    data: T;
    error: unknown;
    meta: { paging?: { nextCursor: string | null; hasMore: boolean } };
  };
  expect(envelope.error, `${id}: ${text.slice(0, 300)}`).toBeNull();
  return { data: envelope.data, meta: envelope.meta, text };
}

const addBody = (login: bigint | string, firstName: string) =>
  `{"login":${login},"group":${JSON.stringify(GROUP)},"leverage":100,"firstName":"${firstName}","lastName":"Exact",` +
  '"password":"Secret123x","passwordInvestor":"Viewer123x"}';

describe('PF5 logins beyond 2^53 − 1', () => {
  it('creates accounts with such logins and reads each back exactly, cached and live, never its neighbour', async () => {
    for (const [login, name] of [
      [A, 'Ada'],
      [B, 'Bea'],
    ] as const) {
      const added = await exactOk<Row>('v1.PF5.UserAdd', { rawBody: addBody(login, name) });
      expect(added.text).toContain(`"login":${login},`);
      expect(added.value).toMatchObject({ login, firstName: name, group: GROUP });
      // The server holds the account under its exact login.
      expect((await sim.ok<Row>('UserGet', { login })).firstName).toBe(name);
    }
    expect((await sim.fails('UserGet', { login: NEIGHBOUR })).message).toContain(String(NEIGHBOUR));

    // Cached, by path: the pumped row is keyed by the exact login.
    const cached = await eventually(async () => {
      const r = await exact<Row>('v1.PF5.UserGet', { params: { login: String(A) } });
      return r.status === 200 ? r : null;
    });
    expect(cached, 'the new account reaches the cache').not.toBeNull();
    expect(cached!.text).toContain(`"login":${A},`);
    expect(cached!.value).toMatchObject({ login: A, firstName: 'Ada' });
    const live = await exactOk<Row>('v1.PF5.UserRequest', { params: { login: String(B) } });
    expect(live.text).toContain(`"login":${B},`);
    expect(live.value).toMatchObject({ login: B, firstName: 'Bea' });

    // The neighbour, which the same double would name, is another (unknown) account on both paths.
    for (const id of ['v1.PF5.UserGet', 'v1.PF5.UserRequest']) {
      const missing = await notFound(c, id, { params: { login: String(NEIGHBOUR) } });
      expect(missing.errorDescription, id).toContain(String(NEIGHBOUR));
    }

    // Lists: by repeated logins (each once, in the order asked, unknown ones left out) and by the group's mask.
    const byLogins = await exactOk<Row[]>('v1.PF5.UserGetByLogins', {
      query: { logins: [String(B), String(NEIGHBOUR), String(A), String(B)] },
    });
    expect(byLogins.value.map((u) => u.login)).toEqual([B, A]);
    expect(byLogins.text).toContain(`"login":${B},`);
    const byGroup = await exactOk<Row[]>('v1.PF5.UserGetByGroup', { params: { mask: GROUP } });
    const logins = byGroup.value.map((u) => u.login);
    expect(logins).toContain(A);
    expect(logins).toContain(B);
    expect(logins).not.toContain(NEIGHBOUR);

    // v2 answers the same exact login in its envelope.
    const v2 = await v2Exact<Row>('v2.PF5.UserGet', { params: { login: String(A) } });
    expect(v2.text).toContain(`"login":${A},`);
    expect(v2.data.login).toBe(A);
  });

  it('takes such a login in a JSON body exactly: the update changes that account, the password is checked for it', async () => {
    await eventually(async () => (await exact('v1.PF5.UserGet', { params: { login: String(A) } })).status === 200);
    const updated = await exactOk<Row>('v1.PF5.UserUpdate', { rawBody: `{"login":${A},"comment":"exact id"}` });
    expect(updated.text).toContain(`"login":${A},`);
    expect(updated.value).toMatchObject({ login: A, comment: 'exact id' });
    expect((await sim.ok<Row>('UserGet', { login: A })).comment).toBe('exact id');
    expect((await sim.ok<Row>('UserGet', { login: B })).comment).toBe('');
    const seen = await eventually(
      async () => (await exact<Row>('v1.PF5.UserGet', { params: { login: String(A) } })).value.comment === 'exact id',
    );
    expect(seen, 'the cache follows the update of the exact login').toBe(true);

    const check = await exactOk('v1.PF5.UserPasswordCheck', {
      params: { login: String(A), type: 'Main' },
      body: 'Secret123x',
    });
    expect(check.value).toBe(true);
    const wrong = await exact<Row>('v1.PF5.UserPasswordCheck', {
      params: { login: String(NEIGHBOUR), type: 'Main' },
      body: 'Secret123x',
    });
    expect(wrong.status).toBe(400);
    expect(wrong.value.errorCode).toBe('UsrInvalidPassword');
  });

  it('streams an account change with such a login exactly (SSE users topic)', async () => {
    const C = 9223372036854775807n;
    const sse = await SseReader.open(`${c.stack.edgeUrl}${c.v2pf5}/Stream?users`, c.token);
    try {
      expect(sse.status).toBe(200);
      await eventually(() => Promise.resolve(sse.of('status').length > 0), 10_000);
      await exactOk('v1.PF5.UserAdd', { rawBody: addBody(C, 'Cy') });
      const streamed = await eventually(
        () => Promise.resolve(sse.of('users').find((e) => e.data.includes(`"login":${C}`)) ?? null),
        10_000,
      );
      expect(streamed, 'the new account is streamed with its exact login').not.toBeNull();
      expect(parseJson(streamed!.data)).toMatchObject({ kind: 'Added', login: C, name: 'Cy Exact' });
    } finally {
      await sse.close();
    }
  });

  it('refuses ids below their minimum, down to the int64 minimum and beyond, naming the field', async () => {
    for (const login of ['0', '-1', '-9223372036854775808', '-9223372036854775809']) {
      expect(await refuses(c, 'v1.PF5.UserGet', 'login', { params: { login } }), login).toMatch(/login/);
    }
    for (const login of ['-1', '-9223372036854775808', '-9223372036854775809']) {
      expect(await refuses(c, 'v1.PF5.UserAdd', 'body.login', { rawBody: addBody(login, 'Under') }), login).toContain(
        'login must be at least 0',
      );
    }
    await refuses(c, 'v1.PF5.DealRequestByTickets', 'body.0', { rawBody: '[-9223372036854775808]' });
    await refuses(c, 'v1.PF5.PositionGetByTickets', 'tickets', { query: { tickets: ['1', '0'] } });
  });

  it('refuses ids beyond the int64 maximum, naming the field', async () => {
    expect(await refuses(c, 'v1.PF5.UserGet', 'login', { params: { login: '9223372036854775808' } })).toContain(
      'at most 9223372036854775807',
    );
    expect(
      await refuses(c, 'v1.PF5.UserAdd', 'body.login', { rawBody: addBody('9223372036854775808', 'Over') }),
    ).toContain('at most 9223372036854775807');
    await refuses(c, 'v1.PF5.PositionGetByTickets', 'tickets', { query: { tickets: ['1', '18446744073709551616'] } });
    await refuses(c, 'v1.PF5.DealRequestByTickets', 'body.0', { rawBody: '[9223372036854775808]' });
  });
});

describe('PF5 tickets beyond 2^53 − 1', () => {
  it('reads a new position and its deals, of a big login, exactly from the cache and live; a deal update hits only its deal', async () => {
    await eventually(async () => (await exact('v1.PF5.UserGet', { params: { login: String(B) } })).status === 200);
    const deposit = await sim.ok<Row>('DealerBalance', { login: B, amount: 10_000 });
    const fill = await sim.ok<{ order: bigint; deal: bigint; position: bigint }>('DealerSend', {
      login: B,
      symbol: 'EURUSD',
      type: 'Buy',
      volume: 1000,
    });
    expect(typeof fill.position).toBe('bigint');
    expect(fill.deal).toBe(deposit.deal + 1n);

    const positions = await eventually(async () => {
      const r = await exact<Row[]>('v1.PF5.PositionGet', { params: { login: String(B) } });
      return r.status === 200 && r.value.length > 0 ? r : null;
    });
    expect(positions!.value.map((p) => [p.position, p.login])).toEqual([[fill.position, B]]);
    expect(positions!.text).toContain(`"position":${fill.position},`);
    const byTicket = await exactOk<Row[]>('v1.PF5.PositionGetByTickets', {
      query: { tickets: [String(fill.position)] },
    });
    expect(byTicket.value.map((p) => [p.position, p.login])).toEqual([[fill.position, B]]);

    // Live deal reads by ticket: the two neighbouring deals are each their own.
    const dealOf = async (ticket: bigint) =>
      (await exactOk<Row>('v1.PF5.DealRequestByTicket', { params: { ticket: String(ticket) } })).value;
    expect(await dealOf(fill.deal)).toMatchObject({
      deal: fill.deal,
      login: B,
      positionID: fill.position,
      action: 'Buy',
    });
    expect(await dealOf(deposit.deal)).toMatchObject({ deal: deposit.deal, login: B, action: 'Balance' });
    const history = await exactOk<Row[]>('v1.PF5.DealRequestAll', { params: { login: String(B) } });
    expect(history.value.map((d) => d.deal)).toEqual([deposit.deal, fill.deal]);
    expect(history.text).toContain(`"deal":${fill.deal},`);

    // A big ticket in a body: only that deal changes.
    const updated = await exactOk<Row>('v1.PF5.DealUpdate', {
      rawBody: `{"deal":${fill.deal},"comment":"exact ticket"}`,
    });
    expect(updated.value).toMatchObject({ deal: fill.deal, comment: 'exact ticket' });
    expect((await sim.ok<Row>('DealRequestByTicket', { ticket: fill.deal })).comment).toBe('exact ticket');
    expect((await sim.ok<Row>('DealRequestByTicket', { ticket: deposit.deal })).comment).not.toBe('exact ticket');
  });

  it("answers the generated world's big tickets exactly by key, and pages them with cursors that keep them exact", async () => {
    const orders = (await sim.ok<Row>('OrdersRequest', {})).items as Row[];
    expect(orders.length).toBeGreaterThan(1);
    for (const o of orders.slice(0, 3)) {
      expect(typeof o.order).toBe('bigint');
      const got = await exactOk<Row>('v1.PF5.OrderGet', { params: { ticket: String(o.order) } });
      expect(got.value).toMatchObject({ order: o.order, login: o.login, symbol: o.symbol });
      expect(got.text).toContain(`"order":${o.order},`);
    }

    // v2 pages the selection by ticket: every page's cursor is the exact last ticket, the pages make the whole list.
    const mask = 'demo\\*';
    const server = (await sim.ok<Row[]>('PositionRequestByGroup', { mask })).map((p) => p.position as bigint);
    expect(server.length).toBeGreaterThan(3);
    const walked: bigint[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 200; page++) {
      const r: { data: Row[]; meta: { paging?: { nextCursor: string | null; hasMore: boolean } } } = await v2Exact<
        Row[]
      >('v2.PF5.PositionByGroup', { params: { mask }, query: { limit: 2, ...(cursor ? { cursor } : {}) } });
      walked.push(...r.data.map((p) => p.position as bigint));
      cursor = r.meta.paging!.nextCursor;
      if (!r.meta.paging!.hasMore) break;
    }
    expect(walked).toEqual([...server].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(new Set(walked).size).toBe(walked.length);
  });
});

describe('PF5 ids of every length beyond 2^53 − 1', () => {
  /**
   * Odd ids of 16, 17, 18 and 19 digits and the int64 maximum: each one's double is another id, so a hop that read one
   * natively (a parser judging "long" by the wrong digit count) would name an account that does not exist.
   */
  const IDS = [9007199254740995n, 12345678901234567n, 123456789012345677n, 1234567890123456789n, 9223372036854775807n];

  it('creates, reads (cached, live, v1 and v2, by path and in a list) and updates each exactly', async () => {
    for (const id of IDS) {
      expect(BigInt(Number(id)), `${id} is not a double`).not.toBe(id);
      const known = await sim.call('UserGet', { login: id });
      if (known.error) {
        const added = await exactOk<Row>('v1.PF5.UserAdd', { rawBody: addBody(id, `L${String(id).length}`) });
        expect(added.text).toContain(`"login":${id},`);
        expect(added.value.login).toBe(id);
      }
      expect((await sim.ok<Row>('UserGet', { login: id })).login).toBe(id);
      const rounded = BigInt(Number(id));
      expect((await sim.call('UserGet', { login: rounded })).error, `${rounded} was never created`).toBeDefined();
    }
    for (const id of IDS) {
      const cached = await eventually(async () => {
        const r = await exact<Row>('v1.PF5.UserGet', { params: { login: String(id) } });
        return r.status === 200 ? r : null;
      });
      expect(cached, `${id} reaches the cache`).not.toBeNull();
      expect(cached!.text).toContain(`"login":${id},`);
      const live = await exactOk<Row>('v1.PF5.UserRequest', { params: { login: String(id) } });
      expect(live.text).toContain(`"login":${id},`);
      const v2 = await v2Exact<Row>('v2.PF5.UserGet', { params: { login: String(id) } });
      expect(v2.text).toContain(`"login":${id},`);
      expect(v2.data.login).toBe(id);
      const updated = await exactOk<Row>('v1.PF5.UserUpdate', {
        rawBody: `{"login":${id},"comment":"digits ${String(id).length}"}`,
      });
      expect(updated.value).toMatchObject({ login: id, comment: `digits ${String(id).length}` });
      expect((await sim.ok<Row>('UserGet', { login: id })).comment).toBe(`digits ${String(id).length}`);
    }
    const listed = await exactOk<Row[]>('v1.PF5.UserGetByLogins', {
      query: { logins: [...IDS].reverse().map(String) },
    });
    expect(listed.value.map((u) => u.login)).toEqual([...IDS].reverse());
  });
});
