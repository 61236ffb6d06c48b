/**
 * The input rules of the v2 PF4 Users and Authentication entries (shared/catalog/v2/pf4/users.ts), as the edge applies
 * them in validateInputs: each refusal with its exact message, the bounds on both sides, the exact arguments a handler
 * receives, and what each entry declares about itself (method, time-out class, scope, paging, how it is answered).
 */
import { describe, expect, it } from 'vitest';
import { type Live, type Operation, type Patch, type Replace } from '../../index.js';
import { accepted, callerOf, entryOf, json, none, refused } from '../../../../test/support/catalog/calls.js';

const entry = (n: string): Operation => entryOf('v2.PF4.', n);

/** One call: path parameters, query string (with its `?`) and body. */
const call = callerOf('v2.PF4.');
/** A call that only carries a body. */
const withBody = (name: string, value: unknown, params: Record<string, string> = {}) =>
  call(name, params, '', json(value));

/** What an entry declares besides its schemas and functions, as plain data. */
const declared = (e: Operation) => ({
  method: e.method,
  path: e.path,
  tag: e.tag,
  response: e.response,
  timeout: e.timeout,
  read: e.read,
  mutating: e.mutating,
  destructive: e.destructive,
  scope: e.scope,
  paged: e.paged,
  answer: JSON.parse(JSON.stringify(e.answer)) as unknown,
});
const live = (name: string) => entry(name).answer as Live<any>;

const text = (n: number, c = 'a') => c.repeat(n);

describe('v2 PF4 users: what each entry declares', () => {
  it('declares each read with its path, GET, the read time-out class, the read scope and how it is answered', () => {
    const read = {
      method: 'GET',
      tag: 'Users',
      timeout: 'read',
      mutating: false,
      destructive: false,
      scope: 'webapi',
      paged: undefined,
    };
    expect(declared(entry('UserRecordGet'))).toStrictEqual({
      ...read,
      path: '/api/v2/PF4/{tradePlatform}/UserRecordGet/{login}',
      response: 'PF4User',
      read: 'cached',
      answer: { kind: 'cachedRecord', table: 'users', key: 'login', what: 'login' },
    });
    expect(declared(entry('UserRecordRequest'))).toStrictEqual({
      ...read,
      path: '/api/v2/PF4/{tradePlatform}/UserRecordRequest/{login}',
      response: 'PF4User',
      read: 'live',
      answer: { kind: 'live', command: 'UserRecordRequest', keyedRead: true },
    });
    expect(declared(entry('UserRecordsRequest'))).toStrictEqual({
      ...read,
      path: '/api/v2/PF4/{tradePlatform}/UserRecordsRequest',
      response: 'PF4User[]',
      read: 'live',
      answer: { kind: 'live', command: 'UserRecordsRequest' },
    });
    expect(declared(entry('UsersRequest'))).toStrictEqual({
      ...read,
      path: '/api/v2/PF4/{tradePlatform}/UsersRequest',
      response: 'PF4User[]',
      read: 'live',
      paged: { key: 'login' },
      answer: { kind: 'livePage', command: 'UsersRequest', native: true },
    });
    expect(declared(entry('AdmBalanceCheckLogin'))).toStrictEqual({
      ...read,
      path: '/api/v2/PF4/{tradePlatform}/AdmBalanceCheck/{login}',
      response: 'PF4BalanceDiff',
      read: 'live',
      answer: { kind: 'live', command: 'AdmBalanceCheck', keyedRead: true },
    });
    expect(declared(entry('AdmBalanceCheck'))).toStrictEqual({
      ...read,
      path: '/api/v2/PF4/{tradePlatform}/AdmBalanceCheck',
      response: 'PF4BalanceDiff[]',
      read: 'live',
      answer: { kind: 'live', command: 'AdmBalanceCheck' },
    });
    expect(declared(entry('AdmUsersRequestSafe'))).toStrictEqual({
      ...read,
      path: '/api/v2/PF4/{tradePlatform}/AdmUsersRequestSafe/{group}',
      response: 'PF4User[]',
      read: 'live',
      answer: { kind: 'live', command: 'AdmUsersRequestSafe', keyedRead: true },
    });
  });

  it('declares each change as mutating with the write scope, its time-out class and how it is answered', () => {
    const change = {
      method: 'POST',
      tag: 'Users',
      read: 'live',
      mutating: true,
      destructive: false,
      scope: 'webapi.write',
      paged: undefined,
    };
    expect(declared(entry('UserRecordNew'))).toStrictEqual({
      ...change,
      path: '/api/v2/PF4/{tradePlatform}/UserRecordNew',
      response: 'PF4User',
      timeout: 'change',
      answer: { kind: 'live', command: 'UserRecordNew' },
    });
    expect(declared(entry('UserRecordUpdate'))).toStrictEqual({
      ...change,
      path: '/api/v2/PF4/{tradePlatform}/UserRecordUpdate/{login}',
      response: 'PF4User',
      timeout: 'change',
      answer: {
        kind: 'replace',
        dto: 'PF4UserUpdate',
        read: { command: 'UserRecordRequest' },
        write: { command: 'UserRecordUpdate' },
      },
    });
    expect(declared(entry('UserRecord'))).toStrictEqual({
      ...change,
      method: 'PATCH',
      path: '/api/v2/PF4/{tradePlatform}/UserRecord/{login}',
      response: 'PF4User',
      timeout: 'change',
      answer: {
        kind: 'patch',
        dto: 'PF4UserUpdate',
        read: { command: 'UserRecordRequest' },
        write: { command: 'UserRecordUpdate' },
      },
    });
    expect(declared(entry('AdmBalanceFix'))).toStrictEqual({
      ...change,
      path: '/api/v2/PF4/{tradePlatform}/AdmBalanceFix',
      response: { type: 'boolean' },
      timeout: 'trade',
      answer: { kind: 'live', command: 'AdmBalanceFix' },
    });
    expect(declared(entry('UserPasswordSet'))).toStrictEqual({
      ...change,
      tag: 'Authentication',
      path: '/api/v2/PF4/{tradePlatform}/UserPasswordSet/{login}',
      response: { type: 'boolean' },
      timeout: 'change',
      answer: { kind: 'live', command: 'UserPasswordSet' },
    });
    // Its own handler: a start also drops the rows the broker holds back of the session's previous snapshot.
    expect(declared(entry('UsersSyncStart'))).toStrictEqual({
      ...change,
      path: '/api/v2/PF4/{tradePlatform}/UsersSyncStart',
      response: { type: 'boolean' },
      timeout: 'maintenance',
      answer: { kind: 'custom' },
    });
    expect(declared(entry('UsersGroupOp'))).toStrictEqual({
      ...change,
      path: '/api/v2/PF4/{tradePlatform}/UsersGroupOp',
      response: { type: 'boolean' },
      timeout: 'change',
      answer: { kind: 'live', command: 'UsersGroupOp' },
    });
  });

  it('declares the password check not mutating but under the write scope, bounded per login, answered by its own handler', () => {
    expect(declared(entry('UserPasswordCheck'))).toStrictEqual({
      method: 'POST',
      path: '/api/v2/PF4/{tradePlatform}/UserPasswordCheck/{login}',
      tag: 'Authentication',
      response: { type: 'boolean' },
      timeout: 'change',
      read: 'live',
      mutating: false,
      destructive: false,
      scope: 'webapi.write',
      paged: undefined,
      answer: { kind: 'custom' },
    });
    expect(entry('UserPasswordCheck').passwordCheck).toStrictEqual({ login: 'login' });
  });

  it('gives every users entry a summary sentence', () => {
    for (const name of [
      'UserRecordGet',
      'UserRecordRequest',
      'UserRecordsRequest',
      'UsersRequest',
      'UserRecordNew',
      'UserRecordUpdate',
      'UserRecord',
      'AdmBalanceCheckLogin',
      'AdmBalanceCheck',
      'AdmBalanceFix',
      'UserPasswordCheck',
      'UserPasswordSet',
      'AdmUsersRequestSafe',
      'UsersSyncStart',
      'UsersGroupOp',
      'UsersSyncRead',
      'UsersSnapshot',
    ]) {
      expect(entry(name).summary, name).toMatch(/^[A-Z].{20,}[.)]$/);
    }
  });
});

describe('v2 PF4 users: login in the path', () => {
  const byLogin = ['UserRecordGet', 'UserRecordRequest', 'AdmBalanceCheckLogin'];

  it('passes the login as a number to the reads by login, from 1 to 2147483647', () => {
    for (const name of byLogin) {
      expect(call(name, { login: '1' }, '', none), name).toStrictEqual(accepted({ login: 1 }));
      expect(call(name, { login: '2147483647' }, '', none), name).toStrictEqual(accepted({ login: 2147483647 }));
    }
  });

  it('refuses a login of 0, one above 2147483647 and one that is not digits', () => {
    for (const name of byLogin) {
      expect(call(name, { login: '0' }, '', none), name).toStrictEqual(refused('login: login must be at least 1'));
      expect(call(name, { login: '2147483648' }, '', none), name).toStrictEqual(
        refused('login: login must be at most 2147483647'),
      );
      expect(call(name, { login: '-1' }, '', none), name).toStrictEqual(
        refused('login: login must be a positive integer'),
      );
    }
  });
});

describe('v2 PF4 users: logins in the query', () => {
  const byLogins = ['UserRecordsRequest', 'AdmBalanceCheck', 'AdmBalanceFix'];

  it('collects repeated logins as numbers, in the order given', () => {
    for (const name of byLogins) {
      expect(call(name, {}, '?logins=7&logins=2147483647&logins=1', none), name).toStrictEqual(
        accepted({ logins: [7, 2147483647, 1] }),
      );
    }
  });

  it('refuses no logins, an empty list entry, a zero and a login beyond int32, naming the position', () => {
    for (const name of byLogins) {
      expect(call(name, {}, '', none), name).toStrictEqual(
        refused('logins: Invalid input: expected array, received undefined'),
      );
      expect(call(name, {}, '?logins=1&logins=0', none), name).toStrictEqual(
        refused('logins.1: logins must be at least 1'),
      );
      expect(call(name, {}, '?logins=2147483648', none), name).toStrictEqual(
        refused('logins.0: logins must be at most 2147483647'),
      );
      expect(call(name, {}, '?logins=x', none), name).toStrictEqual(
        refused('logins.0: logins must be a positive integer'),
      );
    }
  });

  it('passes only the logins to the manager command', () => {
    const args = { logins: [3, 4], other: 'x' };
    expect(live('UserRecordsRequest').args!(args)).toStrictEqual({ logins: [3, 4] });
    expect(live('AdmBalanceCheck').args!(args)).toStrictEqual({ logins: [3, 4] });
    expect(live('AdmBalanceFix').args!(args)).toStrictEqual({ logins: [3, 4] });
  });
});

describe('v2 PF4 users: AdmBalanceCheck answer', () => {
  const result = live('AdmBalanceCheck').result!;

  it('keeps only asked logins with a numeric difference other than 0, in the server order', () => {
    const diffs = [
      { login: 2, diff: 1.5 },
      { login: 1, diff: 0 },
      { login: 9, diff: 4 },
      null,
      { login: 1, diff: '3' },
      { login: 1, diff: -2 },
      { diff: 7 },
    ];
    expect(result(diffs, { logins: [1, 2] })).toStrictEqual([
      { login: 2, diff: 1.5 },
      { login: 1, diff: -2 },
    ]);
  });

  it('answers an empty list when the server answer is not a list', () => {
    expect(result({ login: 1, diff: 3 }, { logins: [1] })).toStrictEqual([]);
    expect(result(null, { logins: [1] })).toStrictEqual([]);
  });
});

describe('v2 PF4 users: UsersRequest paging', () => {
  it('passes limit as a number and the cursor as given, 1 to 5000 and up to 512 characters', () => {
    expect(call('UsersRequest', {}, '', none)).toStrictEqual(accepted({}));
    expect(call('UsersRequest', {}, `?limit=1&cursor=${text(512)}`, none)).toStrictEqual(
      accepted({ limit: 1, cursor: text(512) }),
    );
    expect(call('UsersRequest', {}, '?limit=5000', none)).toStrictEqual(accepted({ limit: 5000 }));
  });

  it('refuses limit 0, limit 5001 and a 513-character cursor', () => {
    expect(call('UsersRequest', {}, '?limit=0', none)).toStrictEqual(refused('limit: limit must be at least 1'));
    expect(call('UsersRequest', {}, '?limit=5001', none)).toStrictEqual(refused('limit: limit must be at most 5000'));
    expect(call('UsersRequest', {}, `?cursor=${text(513)}`, none)).toStrictEqual(
      refused('cursor: cursor must be at most 512 characters'),
    );
  });
});

describe('v2 PF4 users: UserRecordNew body', () => {
  const minimal = { group: 'demo', name: 'Alice' };

  it('accepts a group and a name alone and passes the body unchanged', () => {
    expect(withBody('UserRecordNew', minimal)).toStrictEqual(accepted({ body: { group: 'demo', name: 'Alice' } }));
  });

  it('accepts login 0 (the server assigns) and up to 2147483647, leverage 1 to 10000, and other contract fields', () => {
    const body = { ...minimal, login: 0, leverage: 1, email: 'a@b.c' };
    expect(withBody('UserRecordNew', body)).toStrictEqual(
      accepted({ body: { group: 'demo', name: 'Alice', login: 0, leverage: 1, email: 'a@b.c' } }),
    );
    expect(withBody('UserRecordNew', { ...minimal, login: 5 })).toStrictEqual(
      accepted({ body: { ...minimal, login: 5 } }),
    );
    expect(withBody('UserRecordNew', { ...minimal, login: 2147483647, leverage: 10000 })).toStrictEqual(
      accepted({ body: { ...minimal, login: 2147483647, leverage: 10000 } }),
    );
  });

  it('refuses a negative login and a leverage below 1 with their messages', () => {
    expect(withBody('UserRecordNew', { ...minimal, login: -1 })).toStrictEqual(
      refused('body.login: login must be 0 (server assigns) or positive'),
    );
    expect(withBody('UserRecordNew', { ...minimal, leverage: 0 })).toStrictEqual(
      refused('body.leverage: leverage must be at least 1'),
    );
  });

  it('refuses a login beyond int32 and a leverage above 10000, naming the bound, and fractional values', () => {
    expect(withBody('UserRecordNew', { ...minimal, login: 2147483648 })).toStrictEqual(
      refused('body.login: login must be at most 2147483647'),
    );
    expect(withBody('UserRecordNew', { ...minimal, leverage: 10001 })).toStrictEqual(
      refused('body.leverage: leverage must be at most 10000'),
    );
    expect(withBody('UserRecordNew', { ...minimal, login: 1.5, leverage: 2.5 })).toStrictEqual(
      refused(
        'body.login: Invalid input: expected int, received number; body.leverage: Invalid input: expected int, received number',
      ),
    );
  });

  it('requires the group: 1 to 16 characters', () => {
    expect(withBody('UserRecordNew', { ...minimal, group: text(16) })).toStrictEqual(
      accepted({ body: { ...minimal, group: text(16) } }),
    );
    expect(withBody('UserRecordNew', { ...minimal, group: text(1) })).toStrictEqual(
      accepted({ body: { ...minimal, group: 'a' } }),
    );
    expect(withBody('UserRecordNew', { ...minimal, group: '' })).toStrictEqual(
      refused('body.group: group is required'),
    );
    expect(withBody('UserRecordNew', { ...minimal, group: text(17) })).toStrictEqual(
      refused('body.group: group must be at most 16 characters'),
    );
    expect(withBody('UserRecordNew', { name: 'Alice' })).toStrictEqual(
      refused('body.group: Invalid input: expected string, received undefined'),
    );
    expect(withBody('UserRecordNew', { ...minimal, group: null })).toStrictEqual(
      refused('body.group: Invalid input: expected string, received null'),
    );
  });

  it('requires the name: 1 to 128 characters', () => {
    expect(withBody('UserRecordNew', { ...minimal, name: text(128) })).toStrictEqual(
      accepted({ body: { ...minimal, name: text(128) } }),
    );
    expect(withBody('UserRecordNew', { ...minimal, name: 'B' })).toStrictEqual(
      accepted({ body: { ...minimal, name: 'B' } }),
    );
    expect(withBody('UserRecordNew', { ...minimal, name: '' })).toStrictEqual(refused('body.name: name is required'));
    expect(withBody('UserRecordNew', { ...minimal, name: text(129) })).toStrictEqual(
      refused('body.name: name must be at most 128 characters'),
    );
    expect(withBody('UserRecordNew', { group: 'demo' })).toStrictEqual(
      refused('body.name: Invalid input: expected string, received undefined'),
    );
  });

  it('refuses a field the contract does not have, and a missing body', () => {
    expect(withBody('UserRecordNew', { ...minimal, balance: 5 })).toStrictEqual(
      refused('body: Unrecognized key: "balance"'),
    );
    expect(call('UserRecordNew', {}, '', none)).toStrictEqual(
      refused('body: Invalid input: expected object, received undefined'),
    );
  });
});

describe('v2 PF4 users: UserRecordUpdate body (Type 1)', () => {
  const update = (value: unknown) => withBody('UserRecordUpdate', value, { login: '42' });

  it('accepts an empty update and passes the login and body', () => {
    expect(update({})).toStrictEqual(accepted({ login: 42, body: {} }));
  });

  it('accepts null for group and name (keeps the stored value), balance and credit as sent', () => {
    expect(update({ group: null, name: null, balance: 10, credit: 2 })).toStrictEqual(
      accepted({ login: 42, body: { group: null, name: null, balance: 10, credit: 2 } }),
    );
  });

  it('takes a group of 1 to 16 characters', () => {
    expect(update({ group: 'g' })).toStrictEqual(accepted({ login: 42, body: { group: 'g' } }));
    expect(update({ group: text(16) })).toStrictEqual(accepted({ login: 42, body: { group: text(16) } }));
    expect(update({ group: '' })).toStrictEqual(refused('body.group: group must not be empty'));
    expect(update({ group: text(17) })).toStrictEqual(refused('body.group: group must be at most 16 characters'));
  });

  it('takes a name of 1 to 128 characters', () => {
    expect(update({ name: 'n' })).toStrictEqual(accepted({ login: 42, body: { name: 'n' } }));
    expect(update({ name: text(128) })).toStrictEqual(accepted({ login: 42, body: { name: text(128) } }));
    expect(update({ name: '' })).toStrictEqual(refused('body.name: name must not be empty'));
    expect(update({ name: text(129) })).toStrictEqual(refused('body.name: name must be at most 128 characters'));
  });

  it('takes a whole leverage of 1 to 10000, never null', () => {
    expect(update({ leverage: 1 })).toStrictEqual(accepted({ login: 42, body: { leverage: 1 } }));
    expect(update({ leverage: 10000 })).toStrictEqual(accepted({ login: 42, body: { leverage: 10000 } }));
    expect(update({ leverage: 0 })).toStrictEqual(refused('body.leverage: leverage must be at least 1'));
    expect(update({ leverage: 10001 })).toStrictEqual(refused('body.leverage: leverage must be at most 10000'));
    expect(update({ leverage: 1.5 })).toStrictEqual(
      refused('body.leverage: Invalid input: expected int, received number'),
    );
    expect(update({ leverage: null })).toStrictEqual(
      refused('body.leverage: Invalid input: expected number, received null'),
    );
  });

  it('refuses an unknown field and a bad login in the path', () => {
    expect(update({ foo: 1 })).toStrictEqual(refused('body: Unrecognized key: "foo"'));
    expect(withBody('UserRecordUpdate', {}, { login: '0' })).toStrictEqual(refused('login: login must be at least 1'));
  });

  it('reads the account by login alone and writes the merged record under that login', () => {
    const answer = entry('UserRecordUpdate').answer as Replace<any>;
    const args = { login: 42, body: { name: 'n' } };
    expect(answer.read.args!(args)).toStrictEqual({ login: 42 });
    expect(answer.write.args!(args, { login: 42, name: 'n' })).toStrictEqual({
      login: 42,
      record: { login: 42, name: 'n' },
    });
  });
});

describe('v2 PF4 users: UserRecord merge patch (Type 2)', () => {
  const patch = (value: unknown) => withBody('UserRecord', value, { login: '42' });

  it('passes a patch of any updatable field, null removing an optional one', () => {
    expect(patch({ email: null, comment: 'vip', group: 'g', name: 'n', leverage: 100 })).toStrictEqual(
      accepted({ login: 42, body: { email: null, comment: 'vip', group: 'g', name: 'n', leverage: 100 } }),
    );
  });

  it('refuses removing group, name or leverage, naming each', () => {
    expect(patch({ group: null })).toStrictEqual(refused('body.group: group cannot be removed'));
    expect(patch({ name: null })).toStrictEqual(refused('body.name: name cannot be removed'));
    expect(patch({ leverage: null })).toStrictEqual(refused('body.leverage: leverage cannot be removed'));
    expect(patch({ group: null, name: null, leverage: null })).toStrictEqual(
      refused(
        'body.group: group cannot be removed; body.name: name cannot be removed; body.leverage: leverage cannot be removed',
      ),
    );
  });

  it('takes a group of 1 to 16 characters', () => {
    expect(patch({ group: 'g' })).toStrictEqual(accepted({ login: 42, body: { group: 'g' } }));
    expect(patch({ group: text(16) })).toStrictEqual(accepted({ login: 42, body: { group: text(16) } }));
    expect(patch({ group: '' })).toStrictEqual(refused('body.group: group must be 1 to 16 characters'));
    expect(patch({ group: text(17) })).toStrictEqual(refused('body.group: group must be 1 to 16 characters'));
  });

  it('takes a name of 1 to 128 characters', () => {
    expect(patch({ name: 'n' })).toStrictEqual(accepted({ login: 42, body: { name: 'n' } }));
    expect(patch({ name: text(128) })).toStrictEqual(accepted({ login: 42, body: { name: text(128) } }));
    expect(patch({ name: '' })).toStrictEqual(refused('body.name: name must be 1 to 128 characters'));
    expect(patch({ name: text(129) })).toStrictEqual(refused('body.name: name must be 1 to 128 characters'));
  });

  it('takes a leverage of 1 to 10000', () => {
    expect(patch({ leverage: 1 })).toStrictEqual(accepted({ login: 42, body: { leverage: 1 } }));
    expect(patch({ leverage: 10000 })).toStrictEqual(accepted({ login: 42, body: { leverage: 10000 } }));
    expect(patch({ leverage: 0 })).toStrictEqual(refused('body.leverage: leverage must be 1 to 10000'));
    expect(patch({ leverage: 10001 })).toStrictEqual(refused('body.leverage: leverage must be 1 to 10000'));
  });

  it('reports every out-of-range field of one patch, in field order', () => {
    expect(patch({ group: '', name: '', leverage: 0 })).toStrictEqual(
      refused(
        'body.group: group must be 1 to 16 characters; body.name: name must be 1 to 128 characters; body.leverage: leverage must be 1 to 10000',
      ),
    );
  });

  it('refuses balance and credit, unknown fields, wrong types and an empty patch', () => {
    expect(patch({ balance: 1 })).toStrictEqual(refused('body.balance: balance cannot be changed'));
    expect(patch({ credit: null })).toStrictEqual(refused('body.credit: credit cannot be changed'));
    expect(patch({ comment: 'x', foo: 1 })).toStrictEqual(refused('body: unknown field foo'));
    expect(patch({ group: 5 })).toStrictEqual(refused('body.group: Invalid input: expected string, received number'));
    expect(patch({})).toStrictEqual(refused('body: a merge patch must change at least one field'));
    expect(patch([])).toStrictEqual(refused('body: must be a JSON object (a merge patch)'));
  });

  it('reads the account by login alone and writes the merged record under that login', () => {
    const answer = entry('UserRecord').answer as Patch<any>;
    const args = { login: 42, body: { name: 'n' } };
    expect(answer.read!.args!(args)).toStrictEqual({ login: 42 });
    expect(answer.write!.args!(args, { name: 'n' })).toStrictEqual({ login: 42, record: { name: 'n' } });
  });
});

describe('v2 PF4 users: passwords', () => {
  for (const name of ['UserPasswordCheck', 'UserPasswordSet']) {
    it(`${name} takes a JSON string of 1 to 256 characters as the password`, () => {
      expect(withBody(name, 'p', { login: '7' })).toStrictEqual(accepted({ login: 7, body: 'p' }));
      expect(withBody(name, text(256), { login: '7' })).toStrictEqual(accepted({ login: 7, body: text(256) }));
      expect(withBody(name, '', { login: '7' })).toStrictEqual(refused('body: the password must not be empty'));
      expect(withBody(name, text(257), { login: '7' })).toStrictEqual(
        refused('body: the password must be at most 256 characters'),
      );
    });

    it(`${name} refuses a password that is not a JSON string, or none`, () => {
      expect(withBody(name, 12345, { login: '7' })).toStrictEqual(refused('body: the password must be a JSON string'));
      expect(call(name, { login: '7' }, '', none)).toStrictEqual(refused('body: the password must be a JSON string'));
      expect(withBody(name, 'p', { login: '0' })).toStrictEqual(refused('login: login must be at least 1'));
    });
  }

  it('UserPasswordSet reads changeInvestor and cleanPubkey as booleans and refuses other words', () => {
    expect(call('UserPasswordSet', { login: '7' }, '?changeInvestor=true&cleanPubkey=false', json('p'))).toStrictEqual(
      accepted({ login: 7, changeInvestor: true, cleanPubkey: false, body: 'p' }),
    );
    expect(call('UserPasswordSet', { login: '7' }, '?changeInvestor=false&cleanPubkey=true', json('p'))).toStrictEqual(
      accepted({ login: 7, changeInvestor: false, cleanPubkey: true, body: 'p' }),
    );
    expect(call('UserPasswordSet', { login: '7' }, '?changeInvestor=yes&cleanPubkey=1', json('p'))).toStrictEqual(
      refused('changeInvestor: must be true or false; cleanPubkey: must be true or false'),
    );
  });

  it('UserPasswordSet sends the password and both flags, false when not given', () => {
    const args = live('UserPasswordSet').args!;
    expect(args({ login: 7, body: 'secret' })).toStrictEqual({
      login: 7,
      password: 'secret',
      changeInvestor: false,
      cleanPubkey: false,
    });
    expect(args({ login: 7, body: 'secret', changeInvestor: true, cleanPubkey: true })).toStrictEqual({
      login: 7,
      password: 'secret',
      changeInvestor: true,
      cleanPubkey: true,
    });
    expect(args({ login: 7, body: 'secret', changeInvestor: false, cleanPubkey: false })).toStrictEqual({
      login: 7,
      password: 'secret',
      changeInvestor: false,
      cleanPubkey: false,
    });
  });
});

describe('v2 PF4 users: AdmUsersRequestSafe group', () => {
  it('takes a group of 1 to 16 characters from the path', () => {
    expect(call('AdmUsersRequestSafe', { group: 'g' }, '', none)).toStrictEqual(accepted({ group: 'g' }));
    expect(call('AdmUsersRequestSafe', { group: text(16) }, '', none)).toStrictEqual(accepted({ group: text(16) }));
    expect(call('AdmUsersRequestSafe', { group: '' }, '', none)).toStrictEqual(
      refused('group: group must not be empty'),
    );
    expect(call('AdmUsersRequestSafe', { group: text(17) }, '', none)).toStrictEqual(
      refused('group: group must be at most 16 characters'),
    );
  });
});

describe('v2 PF4 users: UsersSyncStart timestamp', () => {
  it('takes an optional timestamp of 0 to 2147483647 seconds as a number', () => {
    expect(call('UsersSyncStart', {}, '', none)).toStrictEqual(accepted({}));
    expect(call('UsersSyncStart', {}, '?timestamp=0', none)).toStrictEqual(accepted({ timestamp: 0 }));
    expect(call('UsersSyncStart', {}, '?timestamp=2147483647', none)).toStrictEqual(
      accepted({ timestamp: 2147483647 }),
    );
  });

  it('refuses a negative timestamp, one beyond 2038 and one that is not a number', () => {
    expect(call('UsersSyncStart', {}, '?timestamp=-1', none)).toStrictEqual(
      refused('timestamp: timestamp must be at least 0'),
    );
    expect(call('UsersSyncStart', {}, '?timestamp=2147483648', none)).toStrictEqual(
      refused('timestamp: timestamp must be at most 2147483647'),
    );
    expect(call('UsersSyncStart', {}, '?timestamp=soon', none)).toStrictEqual(
      refused('timestamp: timestamp must be an integer'),
    );
  });
});

describe('v2 PF4 users: the batch reads', () => {
  it('declares the sync read mutating (it drains the snapshot) and the snapshot a read, both live in the history class', () => {
    const batch = {
      method: 'GET',
      tag: 'Batch reads',
      response: 'PF4User[]',
      timeout: 'history',
      read: 'live',
      destructive: false,
      paged: undefined,
      answer: { kind: 'custom' },
    };
    expect(declared(entry('UsersSyncRead'))).toStrictEqual({
      ...batch,
      path: '/api/v2/PF4/{tradePlatform}/UsersSyncRead',
      mutating: true,
      scope: 'webapi.write',
    });
    expect(declared(entry('UsersSnapshot'))).toStrictEqual({
      ...batch,
      path: '/api/v2/PF4/{tradePlatform}/UsersSnapshot',
      mutating: false,
      scope: 'webapi',
    });
  });

  it('takes a limit of 1 to 100000 as a number, 100000 (the contract default) when absent', () => {
    for (const name of ['UsersSyncRead', 'UsersSnapshot']) {
      expect(call(name, {}, '', none), name).toStrictEqual(accepted({ limit: 100000 }));
      expect(call(name, {}, '?limit=1', none), name).toStrictEqual(accepted({ limit: 1 }));
      expect(call(name, {}, '?limit=100000', none), name).toStrictEqual(accepted({ limit: 100000 }));
    }
  });

  it('refuses a limit of 0, a negative one, one above 100000 and one that is not an integer, naming limit', () => {
    for (const name of ['UsersSyncRead', 'UsersSnapshot']) {
      expect(call(name, {}, '?limit=0', none), name).toStrictEqual(refused('limit: limit must be at least 1'));
      expect(call(name, {}, '?limit=-1', none), name).toStrictEqual(refused('limit: limit must be at least 1'));
      expect(call(name, {}, '?limit=100001', none), name).toStrictEqual(refused('limit: limit must be at most 100000'));
      expect(call(name, {}, '?limit=2.5', none), name).toStrictEqual(refused('limit: limit must be an integer'));
      expect(call(name, {}, '?limit=all', none), name).toStrictEqual(refused('limit: limit must be an integer'));
      expect(call(name, {}, '?limit=', none), name).toStrictEqual(refused('limit: limit must be an integer'));
    }
  });
});

describe('v2 PF4 users: UsersGroupOp body', () => {
  const op = (value: unknown) => withBody('UsersGroupOp', value);
  const commands = 'command must be one of Delete, Enable, Disable, Leverage, SetGroup';

  it('accepts each command that needs nothing more over a list of logins', () => {
    for (const command of ['Delete', 'Enable', 'Disable']) {
      expect(op({ command, logins: [1, 2147483647] }), command).toStrictEqual(
        accepted({ body: { command, logins: [1, 2147483647] } }),
      );
    }
  });

  it('accepts SetGroup with a group of 1 to 16 characters and Leverage with a leverage of 1 to 10000', () => {
    expect(op({ command: 'SetGroup', logins: [5], newGroup: 'g' })).toStrictEqual(
      accepted({ body: { command: 'SetGroup', logins: [5], newGroup: 'g' } }),
    );
    expect(op({ command: 'SetGroup', logins: [5], newGroup: text(16) })).toStrictEqual(
      accepted({ body: { command: 'SetGroup', logins: [5], newGroup: text(16) } }),
    );
    expect(op({ command: 'Leverage', logins: [5], leverage: 1 })).toStrictEqual(
      accepted({ body: { command: 'Leverage', logins: [5], leverage: 1 } }),
    );
    expect(op({ command: 'Leverage', logins: [5], leverage: 10000 })).toStrictEqual(
      accepted({ body: { command: 'Leverage', logins: [5], leverage: 10000 } }),
    );
  });

  it("reads the command in any case, passing on its documented spelling, and applies that command's rules", () => {
    expect(op({ command: 'setgroup', logins: [5], newGroup: 'g' })).toStrictEqual(
      accepted({ body: { command: 'SetGroup', logins: [5], newGroup: 'g' } }),
    );
    expect(op({ command: 'DELETE', logins: [5], leverage: 0 })).toStrictEqual(
      accepted({ body: { command: 'Delete', logins: [5] } }),
    );
    expect(op({ command: 'leverage', logins: [5] })).toStrictEqual(
      refused('body.leverage: leverage is required for Leverage'),
    );
  });

  it('lets other commands carry a null group and no leverage', () => {
    expect(op({ command: 'Enable', logins: [5], newGroup: null })).toStrictEqual(
      accepted({ body: { command: 'Enable', logins: [5], newGroup: null } }),
    );
    expect(op({ command: 'Leverage', logins: [5], leverage: 3, newGroup: null })).toStrictEqual(
      accepted({ body: { command: 'Leverage', logins: [5], leverage: 3, newGroup: null } }),
    );
  });

  it('refuses an unknown or missing command and a logins value that is not an array', () => {
    expect(op({ command: 'Purge', logins: [1] })).toStrictEqual(refused(`body.command: ${commands}`));
    expect(op({})).toStrictEqual(refused(`body.command: ${commands}; body.logins: logins must be an array of logins`));
    expect(op({ command: 'Enable', logins: 'all' })).toStrictEqual(
      refused('body.logins: logins must be an array of logins'),
    );
  });

  it('refuses each login that is not a positive 32-bit integer, naming its position', () => {
    expect(op({ command: 'Enable', logins: ['a', 1.5, 0, 2147483648, null] })).toStrictEqual(
      refused(
        'body.logins.0: logins must hold integers; body.logins.1: logins must hold integers; body.logins.2: logins must be positive; ' +
          'body.logins.3: logins must be at most 2147483647; body.logins.4: logins must hold integers',
      ),
    );
  });

  it('takes 1 to 100000 logins', () => {
    const most = Array.from({ length: 100_000 }, (_, i) => i + 1);
    expect(op({ command: 'Enable', logins: most })).toStrictEqual(
      accepted({ body: { command: 'Enable', logins: most } }),
    );
    expect(op({ command: 'Enable', logins: [] })).toStrictEqual(
      refused('body.logins: logins must list at least one login'),
    );
    expect(op({ command: 'Enable', logins: [...most, 100_001] })).toStrictEqual(
      refused('body.logins: logins must list at most 100000 logins'),
    );
  });

  it('refuses a group outside 1 to 16 characters and a leverage outside 0 to 10000 whatever the command', () => {
    const below = 'body.leverage: leverage must be at least 1 (0, none, only for commands other than Leverage)';
    expect(op({ command: 'Enable', logins: [1], newGroup: text(17) })).toStrictEqual(
      refused('body.newGroup: newGroup must be at most 16 characters'),
    );
    expect(op({ command: 'Enable', logins: [1], newGroup: '' })).toStrictEqual(
      refused('body.newGroup: newGroup must not be empty'),
    );
    expect(op({ command: 'Enable', logins: [1], leverage: -1 })).toStrictEqual(refused(below));
    expect(op({ command: 'Delete', logins: [1], leverage: -1 })).toStrictEqual(refused(below));
    expect(op({ command: 'Enable', logins: [1], leverage: 10001 })).toStrictEqual(
      refused('body.leverage: leverage must be at most 10000'),
    );
    expect(op({ command: 'Delete', logins: [1], leverage: 1.5 })).toStrictEqual(
      refused('body.leverage: leverage must be an integer'),
    );
  });

  it('takes leverage 0 as none for every command but Leverage (dropped from the record), and refuses it for Leverage', () => {
    for (const command of ['Delete', 'Enable', 'Disable']) {
      expect(op({ command, logins: [1], leverage: 0 }), command).toStrictEqual(
        accepted({ body: { command, logins: [1] } }),
      );
    }
    expect(op({ command: 'SetGroup', logins: [1], newGroup: 'g', leverage: 0 })).toStrictEqual(
      accepted({ body: { command: 'SetGroup', logins: [1], newGroup: 'g' } }),
    );
    expect(op({ command: 'Leverage', logins: [1], leverage: 0 })).toStrictEqual(
      refused('body.leverage: leverage must be at least 1'),
    );
    // Any other leverage a Delete carries is still checked and passed on (the server ignores it).
    expect(op({ command: 'Delete', logins: [1], leverage: 100 })).toStrictEqual(
      accepted({ body: { command: 'Delete', logins: [1], leverage: 100 } }),
    );
  });

  it('requires the group for SetGroup: absent, null or empty', () => {
    expect(op({ command: 'SetGroup', logins: [1] })).toStrictEqual(
      refused('body.newGroup: newGroup is required for SetGroup'),
    );
    expect(op({ command: 'SetGroup', logins: [1], newGroup: null })).toStrictEqual(
      refused('body.newGroup: newGroup is required for SetGroup'),
    );
    expect(op({ command: 'SetGroup', logins: [1], newGroup: '' })).toStrictEqual(
      refused('body.newGroup: newGroup must not be empty; body.newGroup: newGroup is required for SetGroup'),
    );
  });

  it('requires the leverage for Leverage', () => {
    expect(op({ command: 'Leverage', logins: [1] })).toStrictEqual(
      refused('body.leverage: leverage is required for Leverage'),
    );
    expect(op({ command: 'Leverage', logins: [1], newGroup: 'g' })).toStrictEqual(
      refused('body.leverage: leverage is required for Leverage'),
    );
  });

  it('refuses an unknown member and a missing body', () => {
    expect(op({ command: 'Enable', logins: [1], all: true })).toStrictEqual(refused('body: Unrecognized key: "all"'));
    expect(call('UsersGroupOp', {}, '', none)).toStrictEqual(
      refused('body: Invalid input: expected object, received undefined'),
    );
  });

  it('sends the body as the record', () => {
    const body = { command: 'Enable', logins: [1] };
    expect(live('UsersGroupOp').args!({ body })).toStrictEqual({ record: { command: 'Enable', logins: [1] } });
  });
});
