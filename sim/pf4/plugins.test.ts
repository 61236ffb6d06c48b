/**
 * PF4 plugins: the loaded plugin files with their parameters read by position, their configuration written by file
 * (PluginUpdate, CfgUpdatePlugin), and the plugin command channel that goes to the first enabled plugin open to
 * managers, in list order.
 */
import { describe, expect, it } from 'vitest';
import { PF4_RESULT as R } from '../../shared/resultCodes.js';
import * as records from '../../shared/records/contract.js';
import { pf4Harness } from '../testing/worldHarness.js';

const ECHO = { file: 'echo.dll', name: 'Echo', version: 100, copyright: 'Simulated Markets Ltd', enabled: 1, configurable: 1, managerAccess: 1 };
const RISK = { file: 'risk.dll', name: 'Risk limits', version: 100, copyright: 'Simulated Markets Ltd', enabled: 1, configurable: 1, managerAccess: 0 };

describe('PluginParamGet', () => {
  it('answers a plugin with its parameters by position, as the configuration lists them', () => {
    const h = pf4Harness();
    const echo = h.call('PluginParamGet', { pos: 0 });
    records.PF4PluginParam.parse(echo);
    expect(echo).toEqual({ plugin: ECHO, params: [{ name: 'About', value: 'answers ExternalCommand calls with their payload' },
      { name: 'Enabled', value: '1' }] });
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
    expect(h.fails('PluginParamGet', { pos: 2 })).toEqual({ code: R.InvalidData, message: 'plugin position 2 is out of range (0..1)' });
    expect(h.fails('PluginParamGet', { pos: -1 }).message).toMatch(/^pos must be between 0 and /);
    expect(h.fails('PluginParamGet', {}).message).toBe('pos must be an integer');
  });
});

describe('PluginUpdate', () => {
  it('writes a loaded plugin\'s switches and parameters, keeping what the plugin file says about itself', () => {
    const h = pf4Harness();
    const params = [{ name: 'MaxExposure', value: '250000' }];
    expect(h.call('PluginUpdate', { record: { plugin: { file: 'risk.dll', name: 'Renamed', version: 999, copyright: 'x',
      configurable: 0, enabled: 0, managerAccess: 1 }, params } })).toBe(true);
    expect(h.call('PluginParamGet', { pos: 1 })).toEqual({ plugin: { ...RISK, enabled: 0, managerAccess: 1 }, params });
    // Without params the parameters stay; without a switch the switch stays.
    h.call('PluginUpdate', { record: { plugin: { file: 'risk.dll', enabled: 1 } } });
    expect(h.call('PluginParamGet', { pos: 1 })).toEqual({ plugin: { ...RISK, enabled: 1, managerAccess: 1 }, params });
    expect(h.call('PluginParamGet', { pos: 0 }).plugin).toEqual(ECHO);
  });

  it('answers like CfgUpdatePlugin, which writes the same configuration', () => {
    const h = pf4Harness();
    expect(h.call('CfgUpdatePlugin', { record: { plugin: { file: 'echo.dll', enabled: 0 }, params: [] } })).toBe(true);
    expect(h.call('PluginParamGet', { pos: 0 })).toEqual({ plugin: { ...ECHO, enabled: 0 }, params: [] });
  });

  it('refuses an unknown plugin file, a record without a file and a bad field, naming it', () => {
    const h = pf4Harness();
    expect(h.fails('PluginUpdate', { record: { plugin: { file: 'nope.dll', enabled: 1 } } }))
      .toEqual({ code: R.InvalidData, message: 'plugin nope.dll not found' });
    expect(h.fails('PluginUpdate', { record: { plugin: { enabled: 1 } } }).message).toBe('record.plugin.file is required');
    expect(h.fails('PluginUpdate', { record: { params: [] } }).message).toBe('record.plugin.file is required');
    expect(h.fails('PluginUpdate', { record: { plugin: { file: 'echo.dll', enabled: 'yes' } } }).message).toMatch(/^record\.plugin\.enabled: /);
    expect(h.fails('PluginUpdate', { record: { plugin: { file: 'echo.dll' }, params: [{ name: 'A', value: 1 }] } }).message)
      .toMatch(/^record\.params\.0\.value: /);
    expect(h.fails('PluginUpdate', {}).message).toBe('record must be an object');
    expect(h.call('PluginsGet')).toEqual([ECHO, RISK]);
  });

  it('needs the admin right', () => {
    const h = pf4Harness();
    expect(h.fails('PluginUpdate', { record: { plugin: { file: 'echo.dll', enabled: 0 } } }, ['plugins']))
      .toEqual({ code: R.NotEnoughRights, message: 'PluginUpdate needs the admin right' });
  });
});

describe('the plugin command channel', () => {
  it('goes to the first enabled plugin open to managers, in list order', () => {
    const h = pf4Harness();
    const send = () => h.call('ExternalCommandJSON', { payload: { check: 'exposure' } });
    expect(send()).toEqual({ plugin: 'Echo', received: { check: 'exposure' } });
    h.call('PluginUpdate', { record: { plugin: { file: 'risk.dll', managerAccess: 1 } } });
    expect(send().plugin).toBe('Echo');
    h.call('CfgShiftPlugin', { pos: 1, shift: -1 });
    expect(send().plugin).toBe('Risk limits');
    // A disabled plugin is not running, so it answers nothing.
    h.call('PluginUpdate', { record: { plugin: { file: 'risk.dll', enabled: 0 } } });
    expect(send().plugin).toBe('Echo');
    h.call('PluginUpdate', { record: { plugin: { file: 'echo.dll', enabled: 0 } } });
    expect(h.fails('ExternalCommandJSON', { payload: 1 })).toEqual({ code: R.InvalidData, message: 'no plugin answered the command' });
  });
});
