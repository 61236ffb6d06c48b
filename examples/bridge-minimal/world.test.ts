/**
 * The minimal bridge's world: the seed file loads into whole contract records; a world file that cannot be used is
 * refused naming the file and the field; passwords are kept as salted hashes and checked against them; every change
 * is applied before it is reported, in order, and never changes a record handed out.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pf4GroupRecordSchema } from '../../shared/protocol.js';
import { openapiComponents } from '../../shared/records/contract.js';
import { DEFAULT_WORLD } from './options.js';
import { DEFAULT_GROUP_SECURITY, hashPassword, World, WorldFileError, type WorldChange } from './world.js';

const fields = (name: string) => Object.keys((openapiComponents[name] as { properties: object }).properties);
const minimal = () => ({ groups: [{ group: 'demo' }], users: [{ login: 5, group: 'demo', name: 'Five' }] });
const refusal = (file: unknown) => {
  try {
    new World(file, 'test.json');
  } catch (error) {
    if (error instanceof WorldFileError) return error.message;
    throw error;
  }
  throw new Error('the world was accepted');
};

const dir = mkdtempSync(join(tmpdir(), 'bridge-minimal-world-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('loading', () => {
  it('reads the seed file into whole PF4User and PF4Group records', () => {
    const world = World.load(DEFAULT_WORLD);
    expect(world.users().map((u) => [u.login, u.group, u.name])).toEqual([
      [100001, 'demo', 'Alice Example'],
      [100002, 'demo', 'Bruno Example'],
      [100003, 'vip', 'Chiara Example'],
    ]);
    for (const user of world.users()) expect(Object.keys(user)).toEqual(fields('PF4User'));
    for (const group of world.groups())
      expect(Object.keys(group)).toEqual([...fields('PF4Group'), 'secGroups', 'secMargins']);
  });

  it("gives every group the protocol's group record: 32 whole security entries from the default, no margin overrides", () => {
    expect(Object.keys(DEFAULT_GROUP_SECURITY)).toEqual(fields('PF4GroupSec'));
    expect(DEFAULT_GROUP_SECURITY).toMatchObject({
      show: 1,
      trade: 1,
      lotMin: 1,
      lotMax: 10_000,
      lotStep: 1,
      spreadDiff: 0,
      dealingMode: null,
    });
    for (const world of [World.load(DEFAULT_WORLD), new World(minimal())]) {
      for (const group of world.groups()) {
        expect(group.secGroups).toEqual(Array.from({ length: 32 }, () => DEFAULT_GROUP_SECURITY));
        expect(group).toMatchObject({ secMargins: [], secMarginsTotal: 0 });
        expect(pf4GroupRecordSchema.safeParse(group).error?.issues ?? []).toEqual([]);
      }
    }
    const [a, b] = new World({ ...minimal(), groups: [{ group: 'demo' }, { group: 'vip' }] }).groups();
    expect(a.secGroups[0]).not.toBe(b.secGroups[0]);
  });

  it("fills the fields a file leaves out with the contract's empty values", () => {
    const world = new World(minimal());
    expect(world.user(5)).toMatchObject({
      login: 5,
      name: 'Five',
      balance: 0,
      email: null,
      registrationDate: '1970-01-01T00:00:00Z',
    });
    expect(world.group('demo')).toMatchObject({ group: 'demo', defaultLeverage: 0, currency: null });
  });

  it('refuses a file that cannot be used, naming the file and the field', () => {
    const { groups, users } = minimal();
    expect(refusal({ groups, users: [{ ...users[0], nickname: 'F' }] })).toBe(
      'test.json: users.0.nickname: Unrecognized key: "nickname"',
    );
    expect(refusal({ groups, users: [{ ...users[0], login: 0 }] })).toMatch(/^test\.json: users\.0\.login: /);
    expect(refusal({ groups, users: [users[0], users[0]] })).toBe('test.json: users.1.login: login 5 is listed twice');
    expect(refusal({ groups, users: [{ ...users[0], group: 'vip' }] })).toBe(
      'test.json: users.0.group: group vip is not among groups',
    );
    expect(refusal({ groups: [], users })).toMatch(/^test\.json: groups: /);
    expect(refusal({ groups, users, passwords: { 6: hashPassword('x') } })).toBe(
      'test.json: passwords.6: no account has login 6',
    );
    expect(refusal({ groups, users, passwords: { 5: 'plain-text' } })).toBe(
      'test.json: passwords.5: must be a hash written by hashPassword',
    );
    expect(refusal({ groups, users, managers: [] })).toBe('test.json: managers: Unrecognized key: "managers"');
    expect(refusal({ groups: [{ group: 'demo', secMarginsTotal: 2 }], users })).toBe(
      'test.json: groups.0.secMarginsTotal: must be 0: the minimal bridge keeps no per-symbol margin overrides',
    );
    expect(refusal({ groups: [{ group: 'demo', secGroups: [] }], users })).toBe(
      'test.json: groups.0.secGroups: Unrecognized key: "secGroups"',
    );
  });

  it('refuses a missing file and one that is not JSON, naming the file', () => {
    expect(() => World.load(join(dir, 'none.json'))).toThrow(
      new WorldFileError(`world file ${join(dir, 'none.json')}: cannot be read (ENOENT)`),
    );
    writeFileSync(join(dir, 'bad.json'), '{"groups": [');
    expect(() => World.load(join(dir, 'bad.json'))).toThrow(/^world file .*bad\.json: not JSON /);
  });
});

describe('passwords', () => {
  it('keeps a salted hash, never the password, and checks a password against it', () => {
    const hash = hashPassword('Secret-1');
    expect(hash).not.toContain('Secret-1');
    expect(hashPassword('Secret-1')).not.toBe(hash);
    const world = new World({ ...minimal(), passwords: { 5: hash } });
    expect(world.checkPassword(5, 'Secret-1')).toBe(true);
    expect(world.checkPassword(5, 'Secret-2')).toBe(false);
    expect(world.checkPassword(6, 'Secret-1')).toBe(false);
    expect(JSON.stringify(world.users())).not.toContain(hash.split('$')[2]);
  });

  it('an account without a password matches none', () => {
    expect(new World(minimal()).checkPassword(5, '')).toBe(false);
  });
});

describe('changes', () => {
  it('are applied, then reported in order; a record handed out stays as it was', () => {
    const world = new World(minimal());
    const seen: Array<[WorldChange['op'], number, string, string | undefined]> = [];
    const stop = world.onChange((change) =>
      seen.push([change.op, change.record.login, change.record.name, world.user(change.record.login)?.name]),
    );
    const before = world.users();
    world.replaceUser({ ...world.user(5)!, name: 'Five Renamed' });
    world.addUser({ login: 6, group: 'demo', name: 'Six' });
    expect(seen).toEqual([
      ['update', 5, 'Five Renamed', 'Five Renamed'],
      ['add', 6, 'Six', 'Six'],
    ]);
    expect(before[0].name).toBe('Five');
    expect(world.nextFreeLogin()).toBe(100000);
    stop();
    world.replaceUser({ ...world.user(6)!, name: 'Six Renamed' });
    expect(seen).toHaveLength(2);
  });
});
