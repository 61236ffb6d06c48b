/**
 * PF4 plugins: the loaded plugin files with their parameters read by position, their state and configuration written
 * by file (PluginUpdate: enabled and parameters; CfgUpdatePlugin: managerAccess too), every bound checked before
 * anything is written, and the plugin command channel (JSON and binary) that goes to the first enabled plugin open to
 * managers, in list order.
 */
import { describe, expect, it } from 'vitest';
import { PF4_RESULT as R } from '../../shared/resultCodes.js';
import * as records from '../../shared/records/contract.js';
import { pf4Harness } from '../../test/support/sim/worldHarness.js';
import { crc32 } from './pluginChannel.js';

const ECHO = {
  file: 'echo.dll',
  name: 'Echo',
  version: 100,
  copyright: 'Simulated Markets Ltd',
  enabled: 1,
  configurable: 1,
  managerAccess: 1,
};
const RISK = {
  file: 'risk.dll',
  name: 'Risk limits',
  version: 100,
  copyright: 'Simulated Markets Ltd',
  enabled: 1,
  configurable: 1,
  managerAccess: 0,
};

describe('PluginParamGet', () => {
  it('answers a plugin with its parameters by position, as the configuration lists them', () => {
    const h = pf4Harness();
    const echo = h.call('PluginParamGet', { pos: 0 });
    records.PF4PluginParam.parse(echo);
    expect(echo).toEqual({
      plugin: ECHO,
      params: [
        { name: 'About', value: 'answers ExternalCommand calls with their payload' },
        { name: 'Enabled', value: '1' },
      ],
    });
    expect(h.call('PluginParamGet', { pos: 1 }).plugin).toEqual(RISK);
    expect(h.call('CfgRequestPlugin')).toEqual([echo, h.call('PluginParamGet', { pos: 1 })]);
    expect(h.call('PluginsGet')).toEqual([ECHO, RISK]);
  });

  it('follows a shift of the plugin list', () => {
    const h = pf4Harness();
    h.call('CfgShiftPlugin', { pos: 1, shift: -1 });
    expect(h.call('PluginParamGet', { pos: 0 }).plugin.file).toBe('risk.dll');
    expect(h.call('PluginParamGet', { pos: 1 }).plugin.file).toBe('echo.dll');
  });

  it('refuses a position outside the list', () => {
    const h = pf4Harness();
    expect(h.fails('PluginParamGet', { pos: 2 })).toEqual({
      code: R.InvalidData,
      message: 'plugin position 2 is out of range (2 plugins)',
    });
    expect(h.fails('PluginParamGet', { pos: 2147483647 }).message).toBe(
      'plugin position 2147483647 is out of range (2 plugins)',
    );
    expect(h.call('PluginParamGet', { pos: 1 }).plugin.file).toBe('risk.dll');
    expect(h.fails('PluginParamGet', { pos: -1 }).message).toMatch(/^pos must be between 0 and /);
    expect(h.fails('PluginParamGet', {}).message).toBe('pos must be an integer');
  });
});

describe('PluginUpdate', () => {
  it("writes a loaded plugin's state and parameters, keeping its manager access and what the plugin file says about itself", () => {
    const h = pf4Harness();
    const params = [{ name: 'MaxExposure', value: '250000' }];
    expect(
      h.call('PluginUpdate', {
        record: {
          plugin: {
            file: 'risk.dll',
            name: 'Renamed',
            version: 999,
            copyright: 'x',
            configurable: 0,
            enabled: 0,
            managerAccess: 1,
          },
          params,
        },
      }),
    ).toBe(true);
    expect(h.call('PluginParamGet', { pos: 1 })).toEqual({ plugin: { ...RISK, enabled: 0 }, params });
    // Without params the parameters stay; without a switch the switch stays.
    h.call('PluginUpdate', { record: { plugin: { file: 'risk.dll', enabled: 1 } } });
    expect(h.call('PluginParamGet', { pos: 1 })).toEqual({ plugin: RISK, params });
    h.call('PluginUpdate', { record: { plugin: { file: 'risk.dll' }, params: [] } });
    expect(h.call('PluginParamGet', { pos: 1 })).toEqual({ plugin: RISK, params: [] });
    expect(h.call('PluginParamGet', { pos: 0 }).plugin).toEqual(ECHO);
  });

  it('replaces the parameter list whole, a null value stored empty', () => {
    const h = pf4Harness();
    h.call('PluginUpdate', {
      record: {
        plugin: { file: 'echo.dll' },
        params: [
          { name: 'B', value: null },
          { name: 'A', value: 'x' },
        ],
      },
    });
    expect(h.call('PluginParamGet', { pos: 0 }).params).toEqual([
      { name: 'B', value: '' },
      { name: 'A', value: 'x' },
    ]);
  });

  it('refuses an unknown plugin file, a record without a file and a bad field, naming it', () => {
    const h = pf4Harness();
    expect(h.fails('PluginUpdate', { record: { plugin: { file: 'nope.dll', enabled: 1 } } })).toEqual({
      code: R.InvalidData,
      message: 'plugin nope.dll not found',
    });
    expect(h.fails('PluginUpdate', { record: { plugin: { enabled: 1 } } }).message).toBe(
      'record.plugin.file is required',
    );
    expect(h.fails('PluginUpdate', { record: { params: [] } }).message).toBe('record.plugin.file is required');
    expect(h.fails('PluginUpdate', { record: { plugin: { file: 'echo.dll', enabled: 'yes' } } }).message).toMatch(
      /^record\.plugin\.enabled: /,
    );
    expect(
      h.fails('PluginUpdate', { record: { plugin: { file: 'echo.dll' }, params: [{ name: 'A', value: 1 }] } }).message,
    ).toMatch(/^record\.params\.0\.value: /);
    expect(h.fails('PluginUpdate', {}).message).toBe('record must be an object');
    expect(h.call('PluginsGet')).toEqual([ECHO, RISK]);
  });

  it('checks every bound on both sides before writing anything', () => {
    const h = pf4Harness();
    const write = (plugin: Record<string, unknown>, params?: unknown[]) => ({
      record: { plugin: { file: 'echo.dll', ...plugin }, ...(params ? { params } : {}) },
    });
    const named = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `P${i}`, value: String(i) }));
    for (const [field, bad] of [
      ['enabled', 2],
      ['enabled', -1],
      ['managerAccess', 2],
    ] as const) {
      expect(h.fails('CfgUpdatePlugin', write({ [field]: bad })).message).toBe(`record.plugin.${field} must be 0 or 1`);
    }
    expect(h.fails('PluginUpdate', write({ enabled: 0 }, named(65))).message).toBe(
      'record.params: params must list at most 64 parameters',
    );
    expect(h.fails('PluginUpdate', write({ enabled: 0 }, [{ name: 'N'.repeat(33), value: '' }])).message).toBe(
      'record.params.0.name: name must be at most 32 characters',
    );
    expect(h.fails('PluginUpdate', write({ enabled: 0 }, [{ name: 'A', value: 'v'.repeat(129) }])).message).toBe(
      'record.params.0.value: value must be at most 128 characters',
    );
    expect(
      h.fails(
        'PluginUpdate',
        write({ enabled: 0 }, [{ name: 'A', value: '1' }, { name: 'B' }, { name: 'A', value: '2' }]),
      ).message,
    ).toBe('record.params.2.name: name A is already the name of params.0 (names are unique)');
    expect(h.fails('PluginUpdate', write({ enabled: 0 }, [{ value: '1' }])).message).toBe(
      'record.params.0.name: name is required',
    );
    expect(h.fails('PluginUpdate', write({ enabled: 0 }, [{ name: '' }])).message).toBe(
      'record.params.0.name: name must not be empty',
    );
    expect(h.fails('PluginUpdate', { record: { plugin: { file: 'f'.repeat(256) } } }).message).toBe(
      'record.plugin.file must be at most 255 characters',
    );
    // Nothing of a refused write was applied.
    expect(h.call('PluginParamGet', { pos: 0 })).toEqual({
      plugin: ECHO,
      params: [
        { name: 'About', value: 'answers ExternalCommand calls with their payload' },
        { name: 'Enabled', value: '1' },
      ],
    });
    // The bounds themselves are accepted.
    const longest = [...named(63), { name: 'N'.repeat(32), value: 'v'.repeat(128) }];
    expect(h.call('PluginUpdate', write({ enabled: 0 }, longest))).toBe(true);
    expect(h.call('PluginParamGet', { pos: 0 })).toEqual({ plugin: { ...ECHO, enabled: 0 }, params: longest });
    // A file name at its bound passes the check and is looked up.
    expect(h.fails('CfgUpdatePlugin', { record: { plugin: { file: 'f'.repeat(255) } } })).toEqual({
      code: R.InvalidData,
      message: `plugin ${'f'.repeat(255)} not found`,
    });
  });

  it('needs the admin right', () => {
    const h = pf4Harness();
    expect(h.fails('PluginUpdate', { record: { plugin: { file: 'echo.dll', enabled: 0 } } }, ['plugins'])).toEqual({
      code: R.NotEnoughRights,
      message: 'PluginUpdate needs the admin right',
    });
  });
});

describe('CfgUpdatePlugin', () => {
  it('writes the configuration entry: the switches, manager access included, and the parameters', () => {
    const h = pf4Harness();
    expect(h.call('CfgUpdatePlugin', { record: { plugin: { file: 'echo.dll', enabled: 0 }, params: [] } })).toBe(true);
    expect(h.call('PluginParamGet', { pos: 0 })).toEqual({ plugin: { ...ECHO, enabled: 0 }, params: [] });
    h.call('CfgUpdatePlugin', { record: { plugin: { file: 'risk.dll', managerAccess: 1, version: 7 } } });
    expect(h.call('PluginsGet')).toEqual([
      { ...ECHO, enabled: 0 },
      { ...RISK, managerAccess: 1 },
    ]);
  });
});

describe('the plugin command channel', () => {
  it('goes to the first enabled plugin open to managers, in list order', () => {
    const h = pf4Harness();
    const send = () => h.call('ExternalCommandJSON', { payload: { check: 'exposure' } });
    expect(send()).toEqual({ plugin: 'Echo', received: { check: 'exposure' } });
    h.call('CfgUpdatePlugin', { record: { plugin: { file: 'risk.dll', managerAccess: 1 } } });
    expect(send().plugin).toBe('Echo');
    h.call('CfgShiftPlugin', { pos: 1, shift: -1 });
    expect(send().plugin).toBe('Risk limits');
    // A disabled plugin is not running, so it answers nothing.
    h.call('PluginUpdate', { record: { plugin: { file: 'risk.dll', enabled: 0 } } });
    expect(send().plugin).toBe('Echo');
    h.call('PluginUpdate', { record: { plugin: { file: 'echo.dll', enabled: 0 } } });
    expect(h.fails('ExternalCommandJSON', { payload: 1 })).toEqual({
      code: R.InvalidData,
      message: 'no plugin answered the command',
    });
  });
});

describe('the binary plugin command channel', () => {
  const b64 = (bytes: number[] | Uint8Array) => Buffer.from(bytes).toString('base64');
  const run = (h: ReturnType<typeof pf4Harness>, bytes: number[] | Uint8Array) =>
    Buffer.from(h.call('ExternalCommandBinary', { record: { data: b64(bytes) } }).data as string, 'base64');
  const ALL = Array.from({ length: 256 }, (_, i) => i);

  it('echoes the operand of 0x01 byte for byte, every byte value included', () => {
    const h = pf4Harness();
    expect([...run(h, [0x01, ...ALL, ...[...ALL].reverse()])]).toEqual([...ALL, ...[...ALL].reverse()]);
    expect(run(h, [0x01])).toHaveLength(0);
  });

  it('answers 0x02 with the CRC-32 and the length of the operand', () => {
    const h = pf4Harness();
    const digits = [...Buffer.from('123456789')];
    const answer = run(h, [0x02, ...digits]);
    // The CRC-32 check value of "123456789".
    expect([answer.readUInt32BE(0), answer.readUInt32BE(4), answer.length]).toEqual([0xcbf43926, 9, 8]);
    expect(crc32(Uint8Array.from(ALL))).toBe(0x29058c73);
    expect([...run(h, [0x02])]).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
  });

  it('reads the server state with 0x03: accounts, open trades, symbols, groups, time, and the answering plugin', () => {
    const h = pf4Harness();
    const before = Math.floor(Date.now() / 1000);
    const answer = run(h, [0x03]);
    const after = Math.floor(Date.now() / 1000);
    const words = [0, 1, 2, 3, 4].map((i) => answer.readUInt32BE(i * 4));
    expect(words.slice(0, 4)).toEqual([
      h.world.users.size,
      h.world.trades.size,
      h.world.activeSymbols().length,
      h.world.groups.size,
    ]);
    expect(words[0]).toBe(20);
    expect(words[4]).toBeGreaterThanOrEqual(before);
    expect(words[4]).toBeLessThanOrEqual(after);
    expect(answer.subarray(20).toString('utf8')).toBe('echo.dll');
    h.call('CfgUpdatePlugin', { record: { plugin: { file: 'echo.dll', enabled: 0 } } });
    h.call('CfgUpdatePlugin', { record: { plugin: { file: 'risk.dll', managerAccess: 1 } } });
    expect(run(h, [0x03]).subarray(20).toString('utf8')).toBe('risk.dll');
  });

  it('refuses an unknown command byte, no plugin to answer, and data that is not a command', () => {
    const h = pf4Harness();
    expect(h.fails('ExternalCommandBinary', { record: { data: b64([0x7f, 1]) } })).toEqual({
      code: R.InvalidData,
      message: 'binary command 0x7f is unknown (0x01 echo, 0x02 checksum, 0x03 state)',
    });
    expect(h.fails('ExternalCommandBinary', { record: { data: b64([0x00]) } }).message).toMatch(
      /^binary command 0x00 is unknown/,
    );
    expect(h.fails('ExternalCommandBinary', { record: { data: '' } }).message).toBe(
      'record.data must not be empty (at least one byte: the command)',
    );
    expect(h.fails('ExternalCommandBinary', { record: {} }).message).toBe(
      'record.data is required: the command bytes, base64-encoded',
    );
    expect(h.fails('ExternalCommandBinary', { record: { data: 'AAE' } }).message).toMatch(
      /^record\.data: must be base64|^record\.data must be base64/,
    );
    const max = new Uint8Array(65_536).fill(0x01);
    expect(run(h, max)).toHaveLength(65_535);
    expect(h.fails('ExternalCommandBinary', { record: { data: b64(new Uint8Array(65_537).fill(0x01)) } }).message).toBe(
      'record.data must decode to at most 65536 bytes',
    );
    h.call('CfgUpdatePlugin', { record: { plugin: { file: 'echo.dll', managerAccess: 0 } } });
    expect(h.fails('ExternalCommandBinary', { record: { data: b64([0x01, 2]) } })).toEqual({
      code: R.InvalidData,
      message: 'no plugin answered the command',
    });
  });

  it('needs the plugins right', () => {
    const h = pf4Harness();
    expect(h.fails('ExternalCommandBinary', { record: { data: 'AQI=' } }, ['admin'])).toEqual({
      code: R.NotEnoughRights,
      message: 'ExternalCommandBinary needs the plugins right',
    });
    expect(h.call('ExternalCommandBinary', { record: { data: 'AQI=' } }, ['plugins'])).toEqual({ data: 'Ag==' });
  });
});
