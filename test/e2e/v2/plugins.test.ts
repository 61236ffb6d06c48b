/**
 * v2 PF4 Plugins end to end: the plugin list and its parameters read live (PluginsGet, PluginParamGet, CfgRequestPlugin),
 * its state and configuration written by file (PluginUpdate, CfgUpdatePlugin) and seen by every read afterwards, and
 * the binary command channel (ExternalCommandBinary) carrying every byte value both ways. Values are compared with the
 * simulator's own state, read with a manager session of the test's own; every write is undone after its test.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { crc32 } from '../../../sim/pf4/pluginChannel.js';
import type { ManagerClient } from '../../support/sim/managerClient.js';
import { connectManager, stackForFile, type Client } from '../support.js';
import { call, fails, ok, refuses } from './api.js';

type Row = Record<string, any>;

let c: Client;
let sim: ManagerClient;
const setup = stackForFile();

/** The plugin entries as the server holds them when the file starts, restored after every test. */
let seeded: Row[];

beforeAll(async () => {
  c = setup.client;
  sim = await connectManager(c.stack);
  seeded = await sim.ok<Row[]>('CfgRequestPlugin');
});
afterEach(async () => {
  for (const entry of seeded) await sim.ok('CfgUpdatePlugin', { record: entry });
});
afterAll(() => sim?.close());

const serverPlugins = () => sim.ok<Row[]>('CfgRequestPlugin');

describe('v2.PF4.PluginsGet, v2.PF4.PluginParamGet and v2.PF4.CfgRequestPlugin', () => {
  it("answer the server's plugins with their parameters, in its list order", async () => {
    const server = await serverPlugins();
    expect(server.map((p) => p.plugin.file)).toEqual(['echo.dll', 'risk.dll']);
    expect(await ok(c, 'v2.PF4.PluginsGet')).toEqual(server.map((p) => p.plugin));
    expect(await ok(c, 'v2.PF4.CfgRequestPlugin')).toEqual(server);
    for (const [pos, entry] of server.entries()) {
      expect(await ok(c, 'v2.PF4.PluginParamGet', { params: { pos } }), `position ${pos}`).toEqual(entry);
    }
  });

  it('answer a position outside the list as not found, naming the position and the list size', async () => {
    const error = await fails(c, 'v2.PF4.PluginParamGet', { params: { pos: 2 } });
    expect(error).toEqual({
      code: 'NotFound',
      managerCode: 'InvalidData',
      message: 'plugin position 2 is out of range (2 plugins)',
    });
    await refuses(c, 'v2.PF4.PluginParamGet', 'pos', { params: { pos: -1 } });
  });

  it('follow a shift of the plugin list', async () => {
    try {
      await sim.ok('CfgShiftPlugin', { pos: 1, shift: -1 });
      expect((await ok(c, 'v2.PF4.PluginsGet')).map((p: Row) => p.file)).toEqual(['risk.dll', 'echo.dll']);
      expect((await ok(c, 'v2.PF4.PluginParamGet', { params: { pos: 0 } })).plugin.file).toBe('risk.dll');
    } finally {
      await sim.ok('CfgShiftPlugin', { pos: 1, shift: -1 });
    }
  });
});

describe('v2.PF4.PluginUpdate', () => {
  it("changes the plugin's state and parameters, seen by every read; manager access and the file's own fields are kept", async () => {
    const [, risk] = await serverPlugins();
    const params = [
      { name: 'MaxExposure', value: '250000' },
      { name: 'Mode', value: '' },
    ];
    expect(
      await ok(c, 'v2.PF4.PluginUpdate', {
        body: {
          plugin: { ...risk.plugin, name: 'Renamed', version: 1, enabled: 0, managerAccess: 1 },
          params: [params[0], { name: 'Mode', value: null }],
        },
        headers: { 'idempotency-key': `plugin-update-${Date.now()}` },
      }),
    ).toBe(true);
    const written = { plugin: { ...risk.plugin, enabled: 0 }, params };
    expect((await serverPlugins())[1]).toEqual(written);
    expect(await ok(c, 'v2.PF4.PluginParamGet', { params: { pos: 1 } })).toEqual(written);
    expect((await ok(c, 'v2.PF4.PluginsGet'))[1]).toEqual(written.plugin);
    expect((await ok(c, 'v2.PF4.CfgRequestPlugin'))[1]).toEqual(written);
    // Without params the parameters stay.
    expect(await ok(c, 'v2.PF4.PluginUpdate', { body: { plugin: { file: 'risk.dll', enabled: 1 } } })).toBe(true);
    expect((await serverPlugins())[1]).toEqual({ plugin: risk.plugin, params });
  });

  it('is written once under an Idempotency-Key, a repeat replayed', async () => {
    const key = `plugin-once-${Date.now()}`;
    const body = { plugin: { file: 'echo.dll' }, params: [{ name: 'Greeting', value: 'hello' }] };
    const first = await call(c, 'v2.PF4.PluginUpdate', { body, headers: { 'idempotency-key': key } });
    await sim.ok('CfgUpdatePlugin', { record: { plugin: { file: 'echo.dll' }, params: [] } });
    const repeat = await call(c, 'v2.PF4.PluginUpdate', { body, headers: { 'idempotency-key': key } });
    expect([first.body.data, repeat.body.data, repeat.headers.get('idempotency-replayed')]).toEqual([
      true,
      true,
      'true',
    ]);
    expect((await serverPlugins())[0].params).toEqual([]);
  });

  it('answers an unknown plugin file as not found, naming it, and refuses a bad record whole', async () => {
    expect(await fails(c, 'v2.PF4.PluginUpdate', { body: { plugin: { file: 'nope.dll', enabled: 0 } } })).toEqual({
      code: 'NotFound',
      managerCode: 'InvalidData',
      message: 'plugin nope.dll not found',
    });
    const message = await refuses(c, 'v2.PF4.PluginUpdate', 'body.params.1.name', {
      body: {
        plugin: { file: 'echo.dll', enabled: 0 },
        params: [
          { name: 'A', value: '1' },
          { name: 'A', value: '2' },
        ],
      },
    });
    expect(message).toBe('body.params.1.name: name A is already the name of params.0 (names are unique)');
    await refuses(c, 'v2.PF4.PluginUpdate', 'body.plugin.enabled', {
      body: { plugin: { file: 'echo.dll', enabled: 2 } },
    });
    await refuses(c, 'v2.PF4.PluginUpdate', 'body.params', {
      body: {
        plugin: { file: 'echo.dll' },
        params: Array.from({ length: 65 }, (_, i) => ({ name: `P${i}`, value: '' })),
      },
    });
    await refuses(c, 'v2.PF4.PluginUpdate', 'body.plugin.file', { body: { plugin: { enabled: 0 } } });
    expect(await serverPlugins()).toEqual(seeded);
  });
});

describe('v2.PF4.CfgUpdatePlugin', () => {
  it('writes the configuration entry, manager access included, and the command channel follows it', async () => {
    const [echo, risk] = await serverPlugins();
    expect(await ok(c, 'v2.PF4.CfgUpdatePlugin', { body: { plugin: { file: 'echo.dll', managerAccess: 0 } } })).toBe(
      true,
    );
    expect(
      await ok(c, 'v2.PF4.CfgUpdatePlugin', {
        body: {
          plugin: { file: 'risk.dll', managerAccess: 1, enabled: 1, copyright: 'other' },
          params: [{ name: 'Limit', value: '5' }],
        },
      }),
    ).toBe(true);
    const written = [
      { ...echo, plugin: { ...echo.plugin, managerAccess: 0 } },
      { plugin: { ...risk.plugin, managerAccess: 1, enabled: 1 }, params: [{ name: 'Limit', value: '5' }] },
    ];
    expect(await serverPlugins()).toEqual(written);
    expect(await ok(c, 'v2.PF4.CfgRequestPlugin')).toEqual(written);
    expect(await ok(c, 'v2.PF4.PluginsGet')).toEqual(written.map((p) => p.plugin));
    // risk.dll now answers the command channel: its state read names it.
    const state = Buffer.from((await ok(c, 'v2.PF4.ExternalCommandBinary', { body: { data: 'Aw==' } })).data, 'base64');
    expect(state.subarray(20).toString('utf8')).toBe('risk.dll');
  });

  it('answers an unknown plugin file as not found', async () => {
    expect(
      await fails(c, 'v2.PF4.CfgUpdatePlugin', { body: { plugin: { file: 'gone.dll', managerAccess: 1 } } }),
    ).toEqual({ code: 'NotFound', managerCode: 'InvalidData', message: 'plugin gone.dll not found' });
    await refuses(c, 'v2.PF4.CfgUpdatePlugin', 'body.plugin.managerAccess', {
      body: { plugin: { file: 'echo.dll', managerAccess: -1 } },
    });
  });
});

describe('v2.PF4.ExternalCommandBinary', () => {
  const send = async (bytes: Uint8Array | number[]) => {
    const answer = await ok(c, 'v2.PF4.ExternalCommandBinary', {
      body: { data: Buffer.from(bytes).toString('base64') },
    });
    return Buffer.from(answer.data as string, 'base64');
  };
  const ALL = Array.from({ length: 256 }, (_, i) => i);

  it('carries every byte value both ways exactly (echo)', async () => {
    const operand = [...ALL, ...[...ALL].reverse(), 0, 0, 255];
    expect([...(await send([0x01, ...operand]))]).toEqual(operand);
    expect(await send([0x01])).toHaveLength(0);
    const largest = Buffer.alloc(65_536, 0xa5);
    largest[0] = 0x01;
    expect((await send(largest)).equals(largest.subarray(1))).toBe(true);
  });

  it('answers the CRC-32 and length of the operand (checksum)', async () => {
    const answer = await send([0x02, ...ALL]);
    expect([answer.readUInt32BE(0), answer.readUInt32BE(4)]).toEqual([crc32(Uint8Array.from(ALL)), 256]);
    expect((await send([0x02, ...Buffer.from('123456789')])).readUInt32BE(0)).toBe(0xcbf43926);
  });

  it("reads the server's state (accounts, open trades, symbols, groups, time) as the server holds it", async () => {
    const counts = async () => {
      const [users, trades, symbols, groups] = await Promise.all([
        sim.ok<{ items: Row[] }>('UsersRequest', {}),
        sim.ok<{ items: Row[] }>('TradesRequest', {}),
        sim.ok<Row[]>('SymbolsRequest'),
        sim.ok<Row[]>('GroupsRequest'),
      ]);
      return [users.items.length, trades.items.length, symbols.length, groups.length];
    };
    // A trade may close on its own (stops) between the reads: compare a read framed by two equal server states.
    for (let attempt = 1; ; attempt++) {
      const before = { counts: await counts(), time: Math.floor(Date.now() / 1000) };
      const answer = await send([0x03]);
      const after = { counts: await counts(), time: Math.ceil(Date.now() / 1000) };
      if (JSON.stringify(before.counts) !== JSON.stringify(after.counts) && attempt < 5) continue;
      expect([0, 1, 2, 3].map((i) => answer.readUInt32BE(i * 4))).toEqual(after.counts);
      expect(answer.readUInt32BE(16)).toBeGreaterThanOrEqual(before.time);
      expect(answer.readUInt32BE(16)).toBeLessThanOrEqual(after.time);
      expect(answer.subarray(20).toString('utf8')).toBe('echo.dll');
      break;
    }
  });

  it("answers an unknown command byte with the server's refusal, and none when no plugin is open to managers", async () => {
    expect(await fails(c, 'v2.PF4.ExternalCommandBinary', { body: { data: 'fw==' } })).toEqual({
      code: 'PF4Error',
      managerCode: 'InvalidData',
      message: 'binary command 0x7f is unknown (0x01 echo, 0x02 checksum, 0x03 state)',
    });
    await sim.ok('CfgUpdatePlugin', { record: { plugin: { file: 'echo.dll', enabled: 0 } } });
    expect(await fails(c, 'v2.PF4.ExternalCommandBinary', { body: { data: 'AQ==' } })).toMatchObject({
      code: 'PF4Error',
      managerCode: 'InvalidData',
      message: 'no plugin answered the command',
    });
  });

  it('refuses data that is not base64, empty, missing or above 65536 bytes, naming data', async () => {
    expect(await refuses(c, 'v2.PF4.ExternalCommandBinary', 'body.data', { body: { data: 'AQ' } })).toBe(
      'body.data: data must be base64: A-Z, a-z, 0-9, + and /, padded with = to a multiple of 4 characters',
    );
    expect(await refuses(c, 'v2.PF4.ExternalCommandBinary', 'body.data', { body: { data: '' } })).toBe(
      'body.data: data must not be empty (at least one byte: the command)',
    );
    await refuses(c, 'v2.PF4.ExternalCommandBinary', 'body.data', { body: {} });
    expect(
      await refuses(c, 'v2.PF4.ExternalCommandBinary', 'body.data', {
        body: { data: Buffer.alloc(65_537, 1).toString('base64') },
      }),
    ).toBe('body.data: data must decode to at most 65536 bytes');
  });
});
