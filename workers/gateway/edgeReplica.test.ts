/**
 * A link object's replica (workers/gateway/edgeReplica.ts) fed frames by hand, beside the broker-driven
 * broker/link/edgeReplication.test.ts: which entries it plans for, the frame order it accepts, the row bound, the
 * exact answers and not-found refusals, and its counters.
 */
import { describe, expect, it } from 'vitest';
import { findOperation, type Operation } from '../../shared/catalog/index.js';
import type { ReplicaFrame } from '../../shared/replication.js';
import { cursorKey, EdgeReplica, encodeCursor, replicaPlan, type ReplicaPlan } from './edgeReplica.js';

const op = (id: string): Operation => {
  const entry = findOperation(id);
  if (!entry) throw new Error(`no catalog entry ${id}`);
  return entry;
};

describe('replicaPlan', () => {
  it('plans a record read by key on hot tables, with the member it answers', () => {
    expect(replicaPlan(op('v2.PF4.UserRecordGet'))).toStrictEqual({
      kind: 'record',
      family: 'PF4',
      tables: ['users'],
      key: 'login',
      what: 'login',
    });
    expect(replicaPlan(op('v2.PF5.SymbolGet'))).toStrictEqual({
      kind: 'record',
      family: 'PF5',
      tables: ['symbols'],
      key: 'symbol',
      what: 'symbol',
    });
    expect(replicaPlan(op('v2.PF4.GroupSecGroupsGet'))).toStrictEqual({
      kind: 'record',
      family: 'PF4',
      tables: ['groupSecurities'],
      key: 'group',
      what: 'group',
      field: 'secGroups',
    });
  });

  it('plans a record read over further tables only when every one is hot', () => {
    const user = op('v2.PF4.UserRecordGet');
    const answer = user.answer as { kind: 'cachedRecord'; table: string; key: string; what: string };
    expect(replicaPlan({ ...user, answer: { ...answer, orIn: ['groups', 'ticks'] } } as Operation)).toStrictEqual({
      kind: 'record',
      family: 'PF4',
      tables: ['users', 'groups', 'ticks'],
      key: 'login',
      what: 'login',
    });
    expect(replicaPlan({ ...user, answer: { ...answer, orIn: ['groups', 'margins'] } } as Operation)).toBeUndefined();
    // Open trades, then recently closed ones: both replicated. Margins are not.
    expect(replicaPlan(op('v2.PF4.TradeRecordGet'))).toStrictEqual({
      kind: 'record',
      family: 'PF4',
      tables: ['trades', 'closedTrades'],
      key: 'order',
      what: 'order',
    });
    expect(replicaPlan(op('v2.PF4.MarginLevelGet'))).toBeUndefined();
  });

  it('plans a whole list of a hot table', () => {
    const list = (table: string, paged = false) => ({ kind: 'list', family: 'PF4', table, paged });
    expect(replicaPlan(op('v2.PF4.TickInfoLast'))).toStrictEqual(list('ticks'));
    expect(replicaPlan(op('v1.PF4.UsersGet'))).toStrictEqual(list('users'));
    expect(replicaPlan(op('v2.PF4.GroupsGet'))).toStrictEqual(list('groups'));
    // Paged by the table's key, as the broker pages every cached list.
    expect(replicaPlan(op('v2.PF4.TradesGet'))).toStrictEqual(list('trades', true));
    const ticks = op('v2.PF4.TickInfoLast');
    expect(replicaPlan({ ...ticks, paged: { key: 'symbol' } } as Operation)).toStrictEqual(list('ticks', true));
  });

  it('plans no list read through an index, filtered or of a table that is not hot', () => {
    const ticks = op('v2.PF4.TickInfoLast');
    const answer = ticks.answer as { kind: 'cachedList'; table: string };
    expect(
      replicaPlan({ ...ticks, answer: { ...answer, index: { name: 'symbol', arg: 'symbol' } } } as Operation),
    ).toBeUndefined();
    expect(replicaPlan({ ...ticks, answer: { ...answer, where: () => true } } as Operation)).toBeUndefined();
    expect(replicaPlan(op('v1.PF5.UserGetByGroup'))).toBeUndefined();
    expect(replicaPlan(op('v2.PF4.MarginsGet'))).toBeUndefined();
    expect(replicaPlan(op('v2.PF4.TradesGetBySymbol'))).toBeUndefined();
  });

  it('plans nothing for a live, mutating or family-less entry, nor for other answers', () => {
    const user = op('v2.PF4.UserRecordGet');
    expect(replicaPlan({ ...user, read: 'live' })).toBeUndefined();
    expect(replicaPlan({ ...user, mutating: true })).toBeUndefined();
    expect(replicaPlan({ ...user, family: null })).toBeUndefined();
    expect(replicaPlan({ ...user, answer: undefined })).toBeUndefined();
    expect(replicaPlan({ ...user, answer: { kind: 'custom' } } as Operation)).toBeUndefined();
    expect(replicaPlan(op('v2.PF4.ServerTime'))).toBeUndefined();
    expect(replicaPlan(op('v2.PF4.UserRecordNew'))).toBeUndefined();
  });
});

const usersPlan: ReplicaPlan = { kind: 'record', family: 'PF4', tables: ['users'], key: 'login', what: 'login' };
const usersList: ReplicaPlan = { kind: 'list', family: 'PF4', table: 'users', paged: false };
const groupsList: ReplicaPlan = { kind: 'list', family: 'PF4', table: 'groups', paged: false };

/** Frames of replication `rep`, numbered from `from`. */
function framesOf(rep: number, bodies: Array<Record<string, unknown>>, from = 0): ReplicaFrame[] {
  return bodies.map((body, i) => ({ rep, seq: from + i, ...body }) as ReplicaFrame);
}

function applyAll(replica: EdgeReplica, frames: ReplicaFrame[]): boolean[] {
  return frames.map((frame) => replica.apply(frame));
}

/** A PF4 replica in sync on replication 1, holding users 1 and 2 and an empty groups table; next seq 4. */
function synced(maxRows = 10): EdgeReplica {
  const replica = new EdgeReplica('PF4', maxRows);
  replica.expect(1);
  expect(
    applyAll(
      replica,
      framesOf(1, [
        { begin: { tables: ['users', 'groups'] } },
        {
          table: 'users',
          rows: [
            [1, '{"login":1}'],
            [2, '{"login":2}'],
          ],
        },
        { table: 'groups', rows: [] },
        { end: true },
      ]),
    ),
  ).toEqual([true, true, true, true]);
  return replica;
}

describe('EdgeReplica frames', () => {
  it('starts idle and out of sync, awaits the snapshot of the replication it expects, and is in sync at its end', () => {
    const replica = new EdgeReplica('PF4', 10);
    expect(replica.family).toBe('PF4');
    expect(replica.maxRows).toBe(10);
    expect(replica.idle).toBe(true);
    expect(replica.inSync).toBe(false);
    expect(replica.stats()).toStrictEqual({
      inSync: false,
      tables: {},
      chars: 0,
      stored: [],
      answered: 0,
      snapshots: 0,
      lost: 0,
      position: null,
    });
    replica.expect(0);
    expect(replica.idle).toBe(false);
    expect(replica.awaiting(0)).toBe(true);
    expect(replica.awaiting(1)).toBe(false);
    expect(replica.apply({ rep: 0, seq: 0, begin: { tables: ['users'] } })).toBe(true);
    expect(replica.awaiting(0)).toBe(true);
    expect(replica.inSync).toBe(false);
    expect(replica.apply({ rep: 0, seq: 1, end: true })).toBe(true);
    expect(replica.awaiting(0)).toBe(false);
    expect(replica.inSync).toBe(true);
    expect(replica.stats()).toStrictEqual({
      inSync: true,
      tables: { users: 0 },
      chars: 0,
      stored: [],
      answered: 0,
      snapshots: 1,
      lost: 0,
      position: null,
    });
  });

  it('keeps only the tables of the snapshot its family replicates', () => {
    const replica = new EdgeReplica('PF5', 10);
    replica.expect(3);
    applyAll(
      replica,
      framesOf(3, [
        { begin: { tables: ['users', 'ticks', 'symbols', 'trades'] } },
        { table: 'trades', rows: [[1, '{}']] },
        { end: true },
      ]),
    );
    expect(replica.stats().tables).toStrictEqual({ users: 0, symbols: 0 });
  });

  it('ignores frames of another replication, and every frame while idle', () => {
    const idle = new EdgeReplica('PF4', 10);
    expect(idle.apply({ rep: -1, seq: 0, begin: { tables: ['users'] } })).toBe(true);
    expect(idle.apply({ rep: -1, seq: 1, end: true })).toBe(true);
    expect(idle.inSync).toBe(false);
    expect(idle.stats().tables).toStrictEqual({});

    const replica = synced();
    expect(replica.apply({ rep: 2, seq: 4, changes: [['users', 3, '{"login":3}']] })).toBe(true);
    expect(replica.apply({ rep: 2, seq: 0, stop: 'x' })).toBe(true);
    expect(replica.stats()).toStrictEqual({
      inSync: true,
      tables: { users: 2, groups: 0 },
      chars: 22,
      stored: [],
      answered: 0,
      snapshots: 1,
      lost: 0,
      position: null,
    });
    // The ignored frames took no sequence number.
    expect(replica.apply({ rep: 1, seq: 4, changes: [['users', 3, '{"login":3}']] })).toBe(true);
    expect(replica.stats().tables).toStrictEqual({ users: 3, groups: 0 });
  });

  it('falls out of sync on a gap in the sequence, counting the loss once', () => {
    const replica = synced();
    expect(replica.apply({ rep: 1, seq: 5, changes: [] })).toBe(false);
    expect(replica.inSync).toBe(false);
    expect(replica.idle).toBe(true);
    expect(replica.stats()).toStrictEqual({
      inSync: false,
      tables: {},
      chars: 0,
      stored: [],
      answered: 0,
      snapshots: 1,
      lost: 1,
      position: null,
    });
    // Idle now: later frames of that replication are ignored.
    expect(replica.apply({ rep: 1, seq: 4, changes: [] })).toBe(true);
    expect(replica.stats().lost).toBe(1);
  });

  it('refuses snapshot rows and ends outside a snapshot, and changes before its begin', () => {
    const rowsAfterEnd = synced();
    expect(rowsAfterEnd.apply({ rep: 1, seq: 4, table: 'users', rows: [[3, '{}']] })).toBe(false);
    expect(rowsAfterEnd.stats()).toMatchObject({ inSync: false, tables: {}, lost: 1, position: null });

    const endAfterEnd = synced();
    expect(endAfterEnd.apply({ rep: 1, seq: 4, end: true })).toBe(false);
    expect(endAfterEnd.stats()).toMatchObject({ inSync: false, snapshots: 1, lost: 1, position: null });

    const endFirst = new EdgeReplica('PF4', 10);
    endFirst.expect(1);
    expect(endFirst.apply({ rep: 1, seq: 0, end: true })).toBe(false);
    expect(endFirst.stats()).toMatchObject({ inSync: false, snapshots: 0, lost: 0, position: null });

    const rowsFirst = new EdgeReplica('PF4', 10);
    rowsFirst.expect(1);
    expect(rowsFirst.apply({ rep: 1, seq: 0, table: 'users', rows: [] })).toBe(false);
    expect(rowsFirst.idle).toBe(true);

    const changesFirst = new EdgeReplica('PF4', 10);
    changesFirst.expect(1);
    expect(changesFirst.apply({ rep: 1, seq: 0, changes: [['users', 1, '{}']] })).toBe(false);
    expect(changesFirst.idle).toBe(true);

    // A snapshot sent in parts ends with the changes made meanwhile, then its end names the position.
    const changesInSnapshot = new EdgeReplica('PF4', 10);
    changesInSnapshot.expect(1);
    expect(
      applyAll(
        changesInSnapshot,
        framesOf(1, [
          { begin: { tables: ['users'] } },
          {
            table: 'users',
            rows: [
              [1, '{"v":1}'],
              [2, '{"v":1}'],
            ],
          },
          {
            changes: [
              ['users', 1, '{"v":2}'],
              ['users', 2, null],
              ['users', 3, '{"v":1}'],
            ],
          },
        ]),
      ),
    ).toEqual([true, true, true]);
    expect(changesInSnapshot.inSync).toBe(false);
    expect(changesInSnapshot.read(usersPlan, { login: 1 })).toBeUndefined();
    expect(changesInSnapshot.apply({ rep: 1, seq: 3, end: true, pos: '7-9' })).toBe(true);
    expect(changesInSnapshot.stats()).toMatchObject({ inSync: true, tables: { users: 2 }, position: '7-9' });
    expect(changesInSnapshot.read(usersPlan, { login: 1 })).toStrictEqual({ ok: true, dataJson: '{"v":2}' });
    expect(changesInSnapshot.read(usersPlan, { login: 2 })).toMatchObject({ ok: false, error: { code: 'NotFound' } });
  });

  it('applies changes in order: a new row, a replaced one, a deleted one, a missing one, and tables it does not hold', () => {
    const replica = synced();
    expect(
      replica.apply({
        rep: 1,
        seq: 4,
        changes: [
          ['users', 3, '{"login":3}'],
          ['users', 1, '{"login":1,"x":1}'],
          ['users', 2, null],
          ['users', 9, null],
          ['trades', 5, '{"ticket":5}'],
          ['groups', 'g', '{"group":"g"}'],
        ],
      }),
    ).toBe(true);
    expect(replica.read(usersList, {})).toStrictEqual({ ok: true, dataJson: '[{"login":1,"x":1},{"login":3}]' });
    expect(replica.read(groupsList, {})).toStrictEqual({ ok: true, dataJson: '[{"group":"g"}]' });
    expect(replica.stats()).toStrictEqual({
      inSync: true,
      tables: { users: 2, groups: 1 },
      chars: 17 + 11 + 13,
      stored: [],
      answered: 2,
      snapshots: 1,
      lost: 0,
      position: null,
    });
  });

  it('drops a table that grows past the row bound, at the snapshot or by changes, and one the broker drops', () => {
    const atSnapshot = new EdgeReplica('PF4', 2);
    atSnapshot.expect(1);
    applyAll(
      atSnapshot,
      framesOf(1, [
        { begin: { tables: ['users', 'groups', 'ticks'] } },
        {
          table: 'users',
          rows: [
            [1, 'a'],
            [2, 'b'],
          ],
        },
        {
          table: 'groups',
          rows: [
            [1, 'a'],
            [2, 'b'],
            [3, 'c'],
          ],
        },
        { end: true },
      ]),
    );
    expect(atSnapshot.stats().tables).toStrictEqual({ users: 2, ticks: 0 });
    expect(atSnapshot.read(groupsList, {})).toBeUndefined();

    const byChanges = synced(2);
    expect(
      byChanges.apply({
        rep: 1,
        seq: 4,
        changes: [
          ['groups', 'a', '{}'],
          ['groups', 'b', '{}'],
        ],
      }),
    ).toBe(true);
    expect(byChanges.stats().tables).toStrictEqual({ users: 2, groups: 2 });
    expect(
      byChanges.apply({
        rep: 1,
        seq: 5,
        changes: [
          ['users', 3, '{}'],
          ['users', 4, '{}'],
        ],
      }),
    ).toBe(true);
    expect(byChanges.stats().tables).toStrictEqual({ groups: 2 });
    expect(byChanges.read(usersPlan, { login: 1 })).toBeUndefined();

    const dropped = synced();
    expect(dropped.apply({ rep: 1, seq: 4, drop: 'users' })).toBe(true);
    expect(dropped.stats().tables).toStrictEqual({ groups: 0 });
    expect(dropped.inSync).toBe(true);
  });

  it('takes rows of a table the snapshot did not begin, and frames of a kind it does not know, as in order but holds nothing of them', () => {
    const replica = new EdgeReplica('PF4', 10);
    replica.expect(1);
    expect(
      applyAll(
        replica,
        framesOf(1, [
          { begin: { tables: ['users'] } },
          { table: 'groups', rows: [['g', '{}']] },
          { table: 'users', rows: [[1, '{"login":1}']] },
          { end: true },
          { note: 'a kind of a later broker' },
          { changes: [['users', 2, '{"login":2}']] },
        ]),
      ),
    ).toEqual([true, true, true, true, true, true]);
    expect(replica.stats()).toStrictEqual({
      inSync: true,
      tables: { users: 2 },
      chars: 22,
      stored: [],
      answered: 0,
      snapshots: 1,
      lost: 0,
      position: null,
    });
  });

  it('ends on a stop, counting the loss', () => {
    const replica = synced();
    expect(replica.apply({ rep: 1, seq: 4, stop: 'platform removed' })).toBe(false);
    expect(replica.idle).toBe(true);
    expect(replica.stats()).toStrictEqual({
      inSync: false,
      tables: {},
      chars: 0,
      stored: [],
      answered: 0,
      snapshots: 1,
      lost: 1,
      position: null,
    });
  });

  it('takes a new snapshot within a replication as a resync', () => {
    const replica = synced();
    expect(
      applyAll(
        replica,
        framesOf(
          1,
          [{ begin: { tables: ['users'] } }, { table: 'users', rows: [[7, '{"login":7}']] }, { end: true }],
          4,
        ),
      ),
    ).toEqual([true, true, true]);
    expect(replica.read(usersList, {})).toStrictEqual({ ok: true, dataJson: '[{"login":7}]' });
    expect(replica.stats()).toStrictEqual({
      inSync: true,
      tables: { users: 1 },
      chars: 11,
      stored: [],
      answered: 1,
      snapshots: 2,
      lost: 0,
      position: null,
    });
  });

  it('forgets everything when a new replication is expected, and numbers its frames from 0', () => {
    const replica = synced();
    replica.expect(2);
    expect(replica.inSync).toBe(false);
    expect(replica.awaiting(2)).toBe(true);
    expect(replica.stats()).toStrictEqual({
      inSync: false,
      tables: {},
      chars: 0,
      stored: [],
      answered: 0,
      snapshots: 1,
      lost: 0,
      position: null,
    });
    expect(applyAll(replica, framesOf(2, [{ begin: { tables: ['users'] } }, { end: true }]))).toEqual([true, true]);
    expect(replica.stats()).toMatchObject({ inSync: true, tables: { users: 0 }, snapshots: 2 });
  });

  it('counts a reset as a loss only in sync or within a snapshot', () => {
    const idle = new EdgeReplica('PF4', 10);
    idle.reset();
    const expecting = new EdgeReplica('PF4', 10);
    expecting.expect(1);
    expecting.reset();
    const snapshotting = new EdgeReplica('PF4', 10);
    snapshotting.expect(1);
    snapshotting.apply({ rep: 1, seq: 0, begin: { tables: [] } });
    snapshotting.reset();
    const inSync = synced();
    inSync.reset();
    expect([idle, expecting, snapshotting, inSync].map((r) => [r.stats().lost, r.idle, r.inSync])).toEqual([
      [0, true, false],
      [0, true, false],
      [1, true, false],
      [1, true, false],
    ]);
  });
});

describe('EdgeReplica reads', () => {
  it('answers nothing until in sync, and nothing for a table it does not hold', () => {
    const replica = new EdgeReplica('PF4', 10);
    replica.expect(1);
    replica.apply({ rep: 1, seq: 0, begin: { tables: ['users'] } });
    replica.apply({ rep: 1, seq: 1, table: 'users', rows: [[1, '{"login":1}']] });
    expect(replica.read(usersPlan, { login: 1 })).toBeUndefined();
    expect(replica.read(usersList, {})).toBeUndefined();
    replica.apply({ rep: 1, seq: 2, end: true });
    expect(replica.read(groupsList, {})).toBeUndefined();
    expect(replica.read({ ...usersPlan, tables: ['users', 'groups'] }, { login: 1 })).toBeUndefined();
    expect(replica.stats().answered).toBe(0);
    expect(replica.read(usersPlan, { login: 1 })).toStrictEqual({ ok: true, dataJson: '{"login":1}' });
    expect(replica.stats().answered).toBe(1);
  });

  it('lists rows in key order, numbers numerically and text by code unit, and follows every change', () => {
    const replica = new EdgeReplica('PF4', 10);
    replica.expect(1);
    applyAll(
      replica,
      framesOf(1, [
        { begin: { tables: ['users', 'groups'] } },
        {
          table: 'users',
          rows: [
            [10, '10'],
            [9, '9'],
            [100, '100'],
            [1, '1'],
            [25, '25'],
          ],
        },
        {
          table: 'groups',
          rows: [
            ['b', '"b"'],
            ['B', '"B"'],
            ['a', '"a"'],
            ['ab', '"ab"'],
            ['A', '"A"'],
          ],
        },
        { end: true },
      ]),
    );
    expect(replica.read(usersList, {})).toStrictEqual({ ok: true, dataJson: '[1,9,10,25,100]' });
    expect(replica.read(groupsList, {})).toStrictEqual({ ok: true, dataJson: '["A","B","a","ab","b"]' });
    replica.apply({ rep: 1, seq: 4, changes: [['users', 5, '5']] });
    expect(replica.read(usersList, {})).toStrictEqual({ ok: true, dataJson: '[1,5,9,10,25,100]' });
    replica.apply({ rep: 1, seq: 5, changes: [['users', 9, null]] });
    expect(replica.read(usersList, {})).toStrictEqual({ ok: true, dataJson: '[1,5,10,25,100]' });
    replica.apply({ rep: 1, seq: 6, changes: [['users', 10, '"ten"']] });
    expect(replica.read(usersList, {})).toStrictEqual({ ok: true, dataJson: '[1,5,"ten",25,100]' });
    expect(replica.stats().answered).toBe(5);
  });

  it('answers a record by a number or text key, and no other key', () => {
    const replica = new EdgeReplica('PF4', 10);
    replica.expect(1);
    applyAll(
      replica,
      framesOf(1, [
        { begin: { tables: ['users', 'symbolInfo'] } },
        { table: 'users', rows: [[7, '{"login":7}']] },
        { table: 'symbolInfo', rows: [['EURUSD', '{"symbol":"EURUSD"}']] },
        { end: true },
      ]),
    );
    const symbolPlan: ReplicaPlan = {
      kind: 'record',
      family: 'PF4',
      tables: ['symbolInfo'],
      key: 'symbol',
      what: 'symbol',
    };
    expect(replica.read(usersPlan, { login: 7 })).toStrictEqual({ ok: true, dataJson: '{"login":7}' });
    expect(replica.read(symbolPlan, { symbol: 'EURUSD' })).toStrictEqual({ ok: true, dataJson: '{"symbol":"EURUSD"}' });
    for (const login of [7n, undefined, null, true, ['7'], { login: 7 }])
      expect(replica.read(usersPlan, { login })).toBeUndefined();
    expect(replica.read(usersPlan, {})).toBeUndefined();
    expect(replica.stats().answered).toBe(2);
  });

  it("answers an unknown key as the family's not-found refusal, naming what was looked for", () => {
    const pf4 = synced();
    expect(pf4.read({ ...usersPlan, what: 'no quote for symbol' }, { login: 'XYZ' })).toStrictEqual({
      ok: false,
      error: { code: 'NotFound', managerCode: 3, message: 'no quote for symbol XYZ not found' },
    });
    const pf5 = new EdgeReplica('PF5', 10);
    pf5.expect(1);
    applyAll(pf5, framesOf(1, [{ begin: { tables: ['users'] } }, { end: true }]));
    expect(pf5.read({ ...usersPlan, family: 'PF5' }, { login: 42 })).toStrictEqual({
      ok: false,
      error: { code: 'NotFound', managerCode: 13, message: 'login 42 not found' },
    });
    expect(pf5.stats().answered).toBe(1);
  });

  it('looks in the further tables in order when the first has no row', () => {
    const replica = new EdgeReplica('PF4', 10);
    replica.expect(1);
    applyAll(
      replica,
      framesOf(1, [
        { begin: { tables: ['users', 'groups', 'ticks'] } },
        { table: 'users', rows: [[1, '"users 1"']] },
        {
          table: 'groups',
          rows: [
            [1, '"groups 1"'],
            [2, '"groups 2"'],
          ],
        },
        {
          table: 'ticks',
          rows: [
            [2, '"ticks 2"'],
            [3, '"ticks 3"'],
          ],
        },
        { end: true },
      ]),
    );
    const plan: ReplicaPlan = {
      kind: 'record',
      family: 'PF4',
      tables: ['users', 'groups', 'ticks'],
      key: 'n',
      what: 'n',
    };
    expect([1, 2, 3].map((n) => replica.read(plan, { n }))).toStrictEqual([
      { ok: true, dataJson: '"users 1"' },
      { ok: true, dataJson: '"groups 2"' },
      { ok: true, dataJson: '"ticks 3"' },
    ]);
    replica.apply({ rep: 1, seq: 5, drop: 'ticks' });
    expect(replica.read(plan, { n: 1 })).toBeUndefined();
  });

  it('answers one member of a record as JSON, null when it has none, and the member of the row as it is now', () => {
    const replica = new EdgeReplica('PF4', 10);
    replica.expect(1);
    applyAll(
      replica,
      framesOf(1, [
        { begin: { tables: ['groupSecurities'] } },
        { table: 'groupSecurities', rows: [['g', '{"group":"g","secGroups":[{"show":1}],"secMargins":[]}']] },
        { end: true },
      ]),
    );
    const plan = (field: string): ReplicaPlan => ({
      kind: 'record',
      family: 'PF4',
      tables: ['groupSecurities'],
      key: 'group',
      what: 'group',
      field,
    });
    expect(replica.read(plan('secGroups'), { group: 'g' })).toStrictEqual({ ok: true, dataJson: '[{"show":1}]' });
    expect(replica.read(plan('secGroups'), { group: 'g' })).toStrictEqual({ ok: true, dataJson: '[{"show":1}]' });
    expect(replica.read(plan('secMargins'), { group: 'g' })).toStrictEqual({ ok: true, dataJson: '[]' });
    expect(replica.read(plan('missing'), { group: 'g' })).toStrictEqual({ ok: true, dataJson: 'null' });
    replica.apply({ rep: 1, seq: 3, changes: [['groupSecurities', 'g', '{"group":"g","secGroups":[{"show":0}]}']] });
    expect(replica.read(plan('secGroups'), { group: 'g' })).toStrictEqual({ ok: true, dataJson: '[{"show":0}]' });
    expect(replica.read(plan('secGroups'), { group: 'h' })).toMatchObject({
      ok: false,
      error: { message: 'group h not found' },
    });
    expect(replica.stats().answered).toBe(6);
  });

  it('counts the characters of the rows it holds, across replacements and deletions', () => {
    const replica = synced();
    expect(replica.stats().chars).toBe(22);
    replica.apply({ rep: 1, seq: 4, changes: [['users', 1, '{"login":1,"name":"abc"}']] });
    expect(replica.stats().chars).toBe(11 + 24);
    replica.apply({
      rep: 1,
      seq: 5,
      changes: [
        ['users', 2, null],
        ['users', 2, null],
        ['groups', 'g', 'xyz'],
      ],
    });
    expect(replica.stats().chars).toBe(24 + 3);
    replica.apply({ rep: 1, seq: 6, changes: [['users', 1, null]] });
    expect(replica.stats()).toMatchObject({ tables: { users: 0, groups: 1 }, chars: 3 });
  });
});

describe('EdgeReplica positions', () => {
  it('takes the position of the end of a snapshot and of each change frame, and forgets it out of sync', () => {
    const replica = new EdgeReplica('PF4', 10);
    replica.expect(1);
    applyAll(replica, framesOf(1, [{ begin: { tables: ['users'] } }]));
    expect(replica.position).toBeUndefined();
    applyAll(replica, [{ rep: 1, seq: 1, end: true, pos: '100-5' }]);
    expect(replica.position).toEqual({ epoch: 100, count: 5 });
    expect(replica.stats().position).toBe('100-5');
    expect(replica.hasReached({ epoch: 100, count: 5 })).toBe(true);
    expect(replica.hasReached({ epoch: 100, count: 6 })).toBe(false);
    // A changes frame without a position keeps the last one; a malformed one is not taken.
    applyAll(replica, [
      { rep: 1, seq: 2, changes: [['users', 1, '{"login":1}']] },
      { rep: 1, seq: 3, changes: [], pos: 'x' },
    ]);
    expect(replica.stats().position).toBe('100-5');
    applyAll(replica, [{ rep: 1, seq: 4, changes: [['users', 2, '{"login":2}']], pos: '100-9' }]);
    expect(replica.stats().position).toBe('100-9');
    replica.reset();
    expect(replica.position).toBeUndefined();
    expect(replica.hasReached({ epoch: 100, count: 1 })).toBe(false);
  });

  it('settles a wait when a change frame reaches the position, and ends it when the replica falls out of sync', async () => {
    const replica = synced();
    applyAll(replica, [{ rep: 1, seq: 4, changes: [], pos: '7-1' }]);
    expect(await replica.whenReached({ epoch: 7, count: 1 }, 10_000)).toBe(true);
    const reaching = replica.whenReached({ epoch: 7, count: 3 }, 10_000);
    const never = replica.whenReached({ epoch: 7, count: 9 }, 10_000);
    applyAll(replica, [{ rep: 1, seq: 5, changes: [], pos: '7-3' }]);
    expect(await reaching).toBe(true);
    replica.reset();
    expect(await never).toBe(false);
    // Out of sync, or with no time to wait: no wait at all.
    expect(await replica.whenReached({ epoch: 7, count: 3 }, 10_000)).toBe(false);
    const again = synced();
    expect(await again.whenReached({ epoch: 7, count: 3 }, 0)).toBe(false);
  });

  it('gives up a wait the change stream does not answer within its time', async () => {
    const replica = synced();
    applyAll(replica, [{ rep: 1, seq: 4, changes: [], pos: '7-1' }]);
    expect(await replica.whenReached({ epoch: 7, count: 2 }, 20)).toBe(false);
    // The given-up wait is not settled again by a later frame.
    expect(applyAll(replica, [{ rep: 1, seq: 5, changes: [], pos: '7-2' }])).toEqual([true]);
  });
});

describe('EdgeReplica pages', () => {
  const tradesPage: ReplicaPlan = { kind: 'list', family: 'PF4', table: 'trades', paged: true };
  /** A replica in sync holding open trades 10, 20, … 50 and groups `a` and `b`. */
  function withTrades(): EdgeReplica {
    const replica = new EdgeReplica('PF4', 10);
    replica.expect(1);
    applyAll(
      replica,
      framesOf(1, [
        { begin: { tables: ['trades', 'groups'] } },
        { table: 'trades', rows: [50, 10, 40, 20, 30].map((order) => [order, `{"order":${order}}`]) },
        {
          table: 'groups',
          rows: [
            ['b', '{"group":"b"}'],
            ['a', '{"group":"a"}'],
          ],
        },
        { end: true },
      ]),
    );
    return replica;
  }

  it('writes and reads cursors as the broker does: base64url of the JSON of the key, nothing else taken', () => {
    // The broker's encoding: Buffer.from(JSON.stringify(key)).toString('base64url').
    for (const key of [0, 30, 2 ** 53 - 1, 'EURUSD', 'é€', '']) {
      expect(encodeCursor(key)).toBe(Buffer.from(JSON.stringify(key), 'utf8').toString('base64url'));
      expect(cursorKey(encodeCursor(key))).toBe(key);
    }
    const text = (s: string) => Buffer.from(s, 'utf8').toString('base64url');
    // Negative, fractional, beyond 2^53, not canonical, not JSON, not base64url: for the broker to judge.
    for (const cursor of [
      text('-1'),
      text('1.5'),
      text('9007199254740993'),
      text(' 30'),
      text('30.0'),
      text('{'),
      'a+b',
      '?',
    ])
      expect(cursorKey(cursor), cursor).toBeUndefined();
  });

  it('answers pages in key order with the paging the broker gives, and leaves foreign cursors to the broker', () => {
    const replica = withTrades();
    const first = replica.read(tradesPage, { limit: 2 });
    expect(first).toStrictEqual({
      ok: true,
      dataJson: '[{"order":10},{"order":20}]',
      paging: { nextCursor: encodeCursor(20), hasMore: true },
    });
    expect(replica.read(tradesPage, { limit: 2, cursor: encodeCursor(20) })).toStrictEqual({
      ok: true,
      dataJson: '[{"order":30},{"order":40}]',
      paging: { nextCursor: encodeCursor(40), hasMore: true },
    });
    expect(replica.read(tradesPage, { limit: 2, cursor: encodeCursor(40) })).toStrictEqual({
      ok: true,
      dataJson: '[{"order":50}]',
      paging: { nextCursor: null, hasMore: false },
    });
    // A cursor between keys, past the end, and no limit (the rest in one page).
    expect(replica.read(tradesPage, { limit: 2, cursor: encodeCursor(35) })).toMatchObject({
      dataJson: '[{"order":40},{"order":50}]',
    });
    expect(replica.read(tradesPage, { limit: 2, cursor: encodeCursor(99) })).toStrictEqual({
      ok: true,
      dataJson: '[]',
      paging: { nextCursor: null, hasMore: false },
    });
    expect(replica.read(tradesPage, { cursor: encodeCursor(10) })).toStrictEqual({
      ok: true,
      dataJson: '[{"order":20},{"order":30},{"order":40},{"order":50}]',
      paging: { nextCursor: null, hasMore: false },
    });
    // Text keys page by code unit, as the broker's tables order them.
    const groupsPage: ReplicaPlan = { kind: 'list', family: 'PF4', table: 'groups', paged: true };
    expect(replica.read(groupsPage, { limit: 1 })).toMatchObject({ paging: { nextCursor: encodeCursor('a') } });
    const answered = replica.stats().answered;
    // A text key on a ticket-keyed table, and a cursor not as the broker writes it: the broker refuses them.
    expect(replica.read(tradesPage, { limit: 2, cursor: encodeCursor('20') })).toBeUndefined();
    expect(replica.read(groupsPage, { limit: 2, cursor: encodeCursor(1) })).toBeUndefined();
    expect(replica.read(tradesPage, { limit: 2, cursor: 'not+base64url' })).toBeUndefined();
    expect(replica.stats().answered).toBe(answered);
  });

  it('moves no table keyed by text to storage: past the memory bound it leaves the replica', () => {
    const statements: string[] = [];
    const sql = {
      exec(query: string) {
        statements.push(query.split(' ').slice(0, 2).join(' '));
        return { toArray: () => [], rowsWritten: 0, [Symbol.iterator]: () => [][Symbol.iterator]() };
      },
    };
    const replica = new EdgeReplica('PF4', 2, { sql, storedRows: 100 });
    expect(replica.askRows).toBe(100);
    expect(statements).toStrictEqual(['DROP TABLE', 'CREATE TABLE']);
    replica.expect(1);
    applyAll(
      replica,
      framesOf(1, [
        { begin: { tables: ['groups'] } },
        {
          table: 'groups',
          rows: [
            ['a', '{}'],
            ['b', '{}'],
            ['c', '{}'],
          ],
        },
        { end: true },
      ]),
    );
    expect(replica.stats()).toMatchObject({ inSync: true, tables: {}, stored: [] });
    expect(statements).toStrictEqual(['DROP TABLE', 'CREATE TABLE']);
    // Without storage the broker is asked for tables within the memory bound only.
    expect(new EdgeReplica('PF4', 2).askRows).toBe(2);
  });
});
