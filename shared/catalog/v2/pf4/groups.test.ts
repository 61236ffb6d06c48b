/**
 * The input rules of the v2 PF4 Groups entries (shared/catalog/v2/pf4/groups.ts), as the edge applies them in
 * validateInputs: each refusal with its exact message, the bounds on both sides, the exact arguments a handler
 * receives, and what each entry declares about itself (method, time-out class, scope, paging, how it is answered).
 */
import { describe, expect, it } from 'vitest';
import { type Live, type Operation, type Patch, type Replace } from '../../index.js';
import { accepted, callerOf, entryOf, json, none, refused } from '../../../../test/support/catalog/calls.js';

const entry = (n: string): Operation => entryOf('v2.PF4.', n);
const call = callerOf('v2.PF4.');

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
const text = (n: number, c = 'a') => c.repeat(n);

describe('v2 PF4 groups: what each entry declares', () => {
  const reading = {
    method: 'GET',
    tag: 'Groups',
    timeout: 'read',
    mutating: false,
    destructive: false,
    scope: 'webapi',
    paged: undefined,
  };
  const changing = {
    tag: 'Groups',
    timeout: 'change',
    read: 'live',
    mutating: true,
    destructive: false,
    scope: 'webapi.write',
    paged: undefined,
  };

  it('declares the reads with their table or command', () => {
    expect(declared(entry('GroupsGet'))).toStrictEqual({
      ...reading,
      path: '/api/v2/PF4/{tradePlatform}/GroupsGet',
      response: 'PF4Group[]',
      read: 'cached',
      answer: { kind: 'cachedList', table: 'groups' },
    });
    expect(declared(entry('GroupRecordGet'))).toStrictEqual({
      ...reading,
      path: '/api/v2/PF4/{tradePlatform}/GroupRecordGet/{group}',
      response: 'PF4Group',
      read: 'cached',
      answer: { kind: 'cachedRecord', table: 'groups', key: 'group', what: 'group' },
    });
    expect(declared(entry('GroupsRequest'))).toStrictEqual({
      ...reading,
      path: '/api/v2/PF4/{tradePlatform}/GroupsRequest',
      response: 'PF4Group[]',
      read: 'live',
      paged: { key: 'group' },
      answer: { kind: 'livePage', command: 'GroupsRequest' },
    });
    expect(declared(entry('GroupSecGroupsGet'))).toStrictEqual({
      ...reading,
      path: '/api/v2/PF4/{tradePlatform}/GroupSecGroupsGet/{group}',
      response: 'PF4GroupSec[]',
      read: 'cached',
      answer: { kind: 'cachedRecord', table: 'groupSecurities', key: 'group', what: 'group', field: 'secGroups' },
    });
    expect(declared(entry('GroupSecMarginsGet'))).toStrictEqual({
      ...reading,
      path: '/api/v2/PF4/{tradePlatform}/GroupSecMarginsGet/{group}',
      response: 'PF4GroupMargin[]',
      read: 'cached',
      answer: { kind: 'cachedRecord', table: 'groupSecurities', key: 'group', what: 'group', field: 'secMargins' },
    });
    expect(declared(entry('EnsureGroupNameExist'))).toStrictEqual({
      ...reading,
      path: '/api/v2/PF4/{tradePlatform}/EnsureGroupNameExist/{group}',
      response: { type: 'boolean' },
      read: 'live',
      answer: { kind: 'live', command: 'GroupsRequest' },
    });
  });

  it('declares the update and the patch as mutating, read live and written back', () => {
    expect(declared(entry('GroupRecordUpdate'))).toStrictEqual({
      ...changing,
      method: 'POST',
      path: '/api/v2/PF4/{tradePlatform}/GroupRecordUpdate/{group}',
      response: 'PF4Group',
      answer: {
        kind: 'replace',
        dto: 'PF4GroupUpdate',
        read: { command: 'GroupRecordRequest' },
        write: { command: 'GroupRecordUpdate' },
      },
    });
    expect(declared(entry('GroupRecord'))).toStrictEqual({
      ...changing,
      method: 'PATCH',
      path: '/api/v2/PF4/{tradePlatform}/GroupRecord/{group}',
      response: 'PF4Group',
      answer: {
        kind: 'patch',
        dto: 'PF4GroupUpdate',
        read: { command: 'GroupRecordRequest' },
        write: { command: 'GroupRecordUpdate' },
      },
    });
  });

  it('gives every groups entry a summary sentence', () => {
    for (const name of [
      'GroupsGet',
      'GroupRecordGet',
      'GroupsRequest',
      'GroupSecGroupsGet',
      'GroupSecMarginsGet',
      'GroupRecordUpdate',
      'GroupRecord',
      'EnsureGroupNameExist',
    ]) {
      expect(entry(name).summary, name).toMatch(/^[A-Z].{20,}[.)]$/);
    }
  });
});

describe('v2 PF4 groups: group in the path', () => {
  const byGroup = ['GroupRecordGet', 'GroupSecGroupsGet', 'GroupSecMarginsGet', 'EnsureGroupNameExist'];

  it('passes a group of 1 to 16 characters as given, case kept', () => {
    for (const name of byGroup) {
      expect(call(name, { group: 'Real\\Vip' }, '', none), name).toStrictEqual(accepted({ group: 'Real\\Vip' }));
      expect(call(name, { group: text(16) }, '', none), name).toStrictEqual(accepted({ group: text(16) }));
    }
  });

  it('refuses an empty group and a 17-character one', () => {
    for (const name of [...byGroup, 'GroupRecordUpdate', 'GroupRecord']) {
      const body = name === 'GroupRecord' ? json({ company: 'c' }) : name === 'GroupRecordUpdate' ? json({}) : none;
      expect(call(name, { group: '' }, '', body), name).toStrictEqual(refused('group: group must not be empty'));
      expect(call(name, { group: text(17) }, '', body), name).toStrictEqual(
        refused('group: group must be at most 16 characters'),
      );
    }
  });
});

describe('v2 PF4 groups: GroupsRequest paging', () => {
  it('passes limit as a number and the cursor, limit 1 to 5000', () => {
    expect(call('GroupsRequest', {}, '?limit=1&cursor=UmVhbA', none)).toStrictEqual(
      accepted({ limit: 1, cursor: 'UmVhbA' }),
    );
    expect(call('GroupsRequest', {}, '?limit=5000', none)).toStrictEqual(accepted({ limit: 5000 }));
    expect(call('GroupsRequest', {}, '?limit=0', none)).toStrictEqual(refused('limit: limit must be at least 1'));
    expect(call('GroupsRequest', {}, '?limit=5001', none)).toStrictEqual(refused('limit: limit must be at most 5000'));
  });
});

describe('v2 PF4 groups: GroupRecordUpdate body (Type 1)', () => {
  const update = (value: unknown) => call('GroupRecordUpdate', { group: 'demo' }, '', json(value));

  it('passes the group and the body, an empty one included', () => {
    expect(update({})).toStrictEqual(accepted({ group: 'demo', body: {} }));
    expect(update({ otpMode: 'Disabled', marginCall: 50, company: null })).toStrictEqual(
      accepted({ group: 'demo', body: { otpMode: 'Disabled', marginCall: 50, company: null } }),
    );
  });

  it('takes a currency of 1 to 16 characters, or null to keep the stored one', () => {
    expect(update({ currency: 'U' })).toStrictEqual(accepted({ group: 'demo', body: { currency: 'U' } }));
    expect(update({ currency: text(16) })).toStrictEqual(accepted({ group: 'demo', body: { currency: text(16) } }));
    expect(update({ currency: null })).toStrictEqual(accepted({ group: 'demo', body: { currency: null } }));
    expect(update({ currency: '' })).toStrictEqual(refused('body.currency: currency must not be empty'));
    expect(update({ currency: text(17) })).toStrictEqual(
      refused('body.currency: currency must be at most 16 characters'),
    );
  });

  it('refuses a group member (the path names the group) and an unknown mode', () => {
    expect(update({ group: 'other' })).toStrictEqual(refused('body: Unrecognized key: "group"'));
    expect(update({ otpMode: 'SMS' })).toStrictEqual(
      refused('body.otpMode: Invalid option: expected one of "Disabled"|"TOTP_SHA256"'),
    );
  });

  it('reads the group by name alone and writes the merged record under that name', () => {
    const answer = entry('GroupRecordUpdate').answer as Replace<any>;
    const args = { group: 'demo', body: { currency: 'USD' } };
    expect(answer.read.args!(args)).toStrictEqual({ group: 'demo' });
    expect(answer.write.args!(args, { currency: 'USD' })).toStrictEqual({ group: 'demo', record: { currency: 'USD' } });
  });
});

describe('v2 PF4 groups: GroupRecord merge patch (Type 2)', () => {
  const patch = (value: unknown) => call('GroupRecord', { group: 'demo' }, '', json(value));

  it('passes a patch changing required fields and removing optional ones', () => {
    const body = {
      currency: 'EUR',
      otpMode: 'TOTP_SHA256',
      marginMode: 'UseAll',
      newsMode: 'Full',
      groupRights: 'Signals, Trailing',
      marginControllingType: 'Percent',
      company: null,
      marginCall: 40,
    };
    expect(patch(body)).toStrictEqual(accepted({ group: 'demo', body }));
  });

  it('refuses removing the currency and the rights, naming each', () => {
    expect(patch({ currency: null })).toStrictEqual(refused('body.currency: currency cannot be removed'));
    expect(patch({ groupRights: null })).toStrictEqual(refused('body.groupRights: groupRights cannot be removed'));
  });

  it('refuses removing each mode, which has no empty value', () => {
    for (const field of ['otpMode', 'marginMode', 'newsMode', 'marginControllingType']) {
      expect(patch({ [field]: null }), field).toStrictEqual(
        refused(
          `body.${field}: ${field} cannot be emptied (null): give one of its values; body.${field}: ${field} cannot be removed`,
        ),
      );
    }
  });

  it('reports every removal of one patch', () => {
    expect(patch({ currency: null, groupRights: null, company: 'c' })).toStrictEqual(
      refused('body.currency: currency cannot be removed; body.groupRights: groupRights cannot be removed'),
    );
  });

  it('takes a currency of 1 to 16 characters', () => {
    expect(patch({ currency: 'U' })).toStrictEqual(accepted({ group: 'demo', body: { currency: 'U' } }));
    expect(patch({ currency: text(16) })).toStrictEqual(accepted({ group: 'demo', body: { currency: text(16) } }));
    expect(patch({ currency: '' })).toStrictEqual(refused('body.currency: currency must be 1 to 16 characters'));
    expect(patch({ currency: text(17) })).toStrictEqual(refused('body.currency: currency must be 1 to 16 characters'));
  });

  it('refuses a group member by name, an empty patch and a body that is not an object', () => {
    expect(patch({ company: null, group: 'x' })).toStrictEqual(refused('body: unknown field group'));
    expect(patch({})).toStrictEqual(refused('body: a merge patch must change at least one field'));
    expect(patch('x')).toStrictEqual(refused('body: must be a JSON object (a merge patch)'));
  });

  it('reads the group by name alone and writes the merged record under that name', () => {
    const answer = entry('GroupRecord').answer as Patch<any>;
    const args = { group: 'demo', body: { company: 'c' } };
    expect(answer.read!.args!(args)).toStrictEqual({ group: 'demo' });
    expect(answer.write!.args!(args, { company: 'c' })).toStrictEqual({ group: 'demo', record: { company: 'c' } });
  });
});

describe('v2 PF4 groups: EnsureGroupNameExist answer', () => {
  const answer = entry('EnsureGroupNameExist').answer as Live<any>;

  it('lists every group with no arguments', () => {
    expect(answer.args!({ group: 'demo' })).toBeUndefined();
  });

  it('answers true only for a group of exactly that name, case-sensitive', () => {
    const all = [null, { group: 'real\\vip' }, { group: 'Real\\Vip' }];
    expect(answer.result!(all, { group: 'Real\\Vip' })).toBe(true);
    expect(answer.result!(all, { group: 'REAL\\VIP' })).toBe(false);
    expect(answer.result!([], { group: 'demo' })).toBe(false);
  });

  it('answers false when the server answer is not a list', () => {
    expect(answer.result!({ group: 'demo' }, { group: 'demo' })).toBe(false);
    expect(answer.result!(null, { group: 'demo' })).toBe(false);
  });
});
