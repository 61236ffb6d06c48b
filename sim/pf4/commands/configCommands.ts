/**
 * PF4 configuration commands. The list sections share one set of commands built from one table:
 * CfgRequest<List>, CfgUpdate<List> {pos?, record}, CfgDelete<List> {pos}, CfgShift<List> {pos, shift}; records are
 * checked against their contract schema. The single-record sections (common, access hours, backup) are read and
 * written whole, keeping the fields the spec says an update leaves alone.
 */
import type { z } from 'zod';
import * as contract from '../../../shared/records/contract.js';
import type { CommandRegistry } from '../../world/commandRegistry.js';
import { CommandError } from '../../world/simWorld.js';
import type { Pf4ConfigListName } from '../pf4Config.js';
import type { Pf4World } from '../pf4World.js';
import { bad, parseRecord } from './common.js';

const SCHEMAS: Record<Pf4ConfigListName, z.ZodType> = {
  Holiday: contract.PF4Holiday, Manager: contract.PF4ManagerRights, Access: contract.PF4Access,
  DataServer: contract.PF4DataServer, Feeder: contract.PF4Feeder, GatewayAccount: contract.PF4GatewayAccount,
  GatewayMarkup: contract.PF4GatewayMarkup, GatewayRule: contract.PF4GatewayRule, LiveUpdate: contract.PF4LiveUpdate,
  Sync: contract.PF4Sync, Plugin: contract.PF4PluginParam, SymbolGroup: contract.PF4SymbolGroup,
};

/** Fields a keyed list's records must carry, by list. */
const KEYS: Partial<Record<Pf4ConfigListName, (r: Record<string, unknown>) => unknown>> = {
  Manager: (r) => r.login, Feeder: (r) => r.name, GatewayAccount: (r) => r.name, GatewayRule: (r) => r.name,
  Plugin: (r) => (r.plugin as Record<string, unknown> | undefined)?.file,
};

/** The 32 symbol groups are fixed slots: they are rewritten in place, never added, removed or moved. */
const FIXED: ReadonlySet<Pf4ConfigListName> = new Set(['SymbolGroup']);

export function registerConfigCommands(registry: CommandRegistry, world: Pf4World): void {
  for (const name of Object.keys(SCHEMAS) as Pf4ConfigListName[]) {
    const list = world.config.lists[name];
    registry.on(`CfgRequest${name}`, () => list.list());
    registry.on(`CfgUpdate${name}`, (args) => {
      const record = parseRecord<Record<string, unknown>>(SCHEMAS[name], args.object('record'), 'record');
      const key = KEYS[name];
      if (key && (key(record) === undefined || key(record) === null || key(record) === '')) args.fail(`record: the ${list.what} key field is required`);
      const pos = args.optionalInt('pos', { min: -1 });
      if (FIXED.has(name) && (pos === undefined || pos < 0 || pos >= list.size)) args.fail(`pos must be between 0 and ${list.size - 1}`);
      list.upsert(record, pos);
      world.journal(`config: ${list.what} ${pos === undefined || pos < 0 ? 'written' : `at ${pos} written`}`);
      return record;
    });
    if (FIXED.has(name)) continue;
    registry.on(`CfgDelete${name}`, (args) => {
      const pos = args.int('pos', { min: 0 });
      list.delete(pos);
      world.journal(`config: ${list.what} at ${pos} deleted`);
      return true;
    });
    registry.on(`CfgShift${name}`, (args) => {
      list.shift(args.int('pos', { min: 0 }), args.int('shift'));
      return true;
    });
  }

  registry.on('CfgRequestCommon', () => world.config.commonRecord());
  registry.on('ManagerCommon', () => world.config.commonRecord());
  registry.on('CfgUpdateCommon', (args) => {
    const update = parseRecord<Record<string, unknown>>(contract.PF4CommonUpdate, args.object('record'), 'record');
    for (const [field, value] of Object.entries(update)) if (value !== undefined && value !== null) world.config.common[field] = value;
    world.journal('config: common updated');
    return world.config.commonRecord();
  });

  registry.on('CfgRequestTime', () => ({ accessHours: [...world.config.accessHours] }));
  registry.on('CfgUpdateTime', (args) => {
    const update = parseRecord<{ accessHours?: number[] | null }>(contract.PF4ServerTime, args.object('record'), 'record');
    if (!update.accessHours || update.accessHours.length !== 168) args.fail('record.accessHours must have exactly 168 entries');
    // Values other than 0 and 1 pass through unvalidated, as the platform does.
    world.config.accessHours = [...(update.accessHours as number[])];
    world.journal('config: access hours updated');
    return { accessHours: [...world.config.accessHours] };
  });

  registry.on('CfgRequestBackup', () => ({ ...world.config.backup }));
  registry.on('CfgUpdateBackup', (args) => {
    const update = parseRecord<Record<string, unknown>>(contract.PF4Backup, args.object('record'), 'record');
    const preserved = ['fullBackupLastTime', 'archiveLastTime', 'exportLastTime', 'watchTimestamp'];
    for (const [field, value] of Object.entries(update)) {
      if (value !== undefined && value !== null && !preserved.includes(field)) world.config.backup[field] = value;
    }
    world.journal('config: backup updated');
    return { ...world.config.backup };
  });

  registry.on('SrvFeeders', () => world.config.lists.Feeder.list().filter((f) => f.enable === 1)
    .sort((a, b) => String(a.name).localeCompare(String(b.name))));

  registry.on('PluginsGet', () => world.config.lists.Plugin.list().map((p) => p.plugin));
  registry.on('PluginParamGet', (args) => world.config.lists.Plugin.at(args.int('pos', { min: 0 })));
  registry.on('PluginUpdate', (args) => {
    const record = parseRecord<Record<string, unknown>>(contract.PF4PluginParam, args.object('record'), 'record');
    const file = (record.plugin as Record<string, unknown> | undefined)?.file;
    if (typeof file !== 'string' || world.config.lists.Plugin.indexOf(file) < 0) throw new CommandError(bad, `plugin ${String(file)} not found`);
    world.config.lists.Plugin.upsert(record);
    return true;
  });
}
