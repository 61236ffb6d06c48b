/**
 * PF4 configuration commands. The list sections share one set of commands built from one table:
 * CfgRequest<List>, CfgUpdate<List> {pos?, record}, CfgDelete<List> {pos}, CfgShift<List> {pos, shift}; records are
 * checked against their contract schema, keyed lists' records must carry their key, and every change is journalled.
 * The symbol groups are fixed slots and the plugins the server's loaded files, so neither is added to or deleted
 * from. The single-record sections (common, access hours, backup) are read and written whole, keeping the fields the
 * spec says an update leaves alone.
 */
import type { z } from 'zod';
import * as contract from '../../../shared/records/contract.js';
import type { ArgReader } from '../../world/args.js';
import type { CommandRegistry } from '../../world/commandRegistry.js';
import { CommandError } from '../../world/commandError.js';
import { pf4ListChanges, type Pf4ConfigListName } from '../pf4Config.js';
import type { Pf4World } from '../pf4World.js';
import { symbolGroupRecord } from '../pf4Records.js';
import { PF4_SERVER_ONLY, serverOnlyOf, type Pf4ServerOnlyKind } from '../serverOnlyFields.js';
import type { OrderedList } from '../../world/orderedList.js';
import { bad, optionalBool, parseRecord } from './common.js';
import { PLUGIN_FILE_MAX, PLUGIN_SWITCHES, pluginParamsProblems } from '../../../shared/plugins.js';

const SCHEMAS: Record<Pf4ConfigListName, z.ZodType> = {
  Holiday: contract.PF4Holiday,
  Manager: contract.PF4ManagerRights,
  Access: contract.PF4Access,
  DataServer: contract.PF4DataServer,
  Feeder: contract.PF4Feeder,
  GatewayAccount: contract.PF4GatewayAccount,
  GatewayMarkup: contract.PF4GatewayMarkup,
  GatewayRule: contract.PF4GatewayRule,
  LiveUpdate: contract.PF4LiveUpdate,
  Sync: contract.PF4Sync,
  Plugin: contract.PF4PluginParam,
  SymbolGroup: contract.PF4SymbolGroup,
};

/** The key field of each keyed list, as error messages name it, and how to read it from a record. */
const KEYS: Partial<Record<Pf4ConfigListName, { field: string; of: (r: Record<string, unknown>) => unknown }>> = {
  Manager: { field: 'login', of: (r) => r.login },
  Feeder: { field: 'name', of: (r) => r.name },
  GatewayAccount: { field: 'name', of: (r) => r.name },
  GatewayRule: { field: 'name', of: (r) => r.name },
  Plugin: { field: 'plugin.file', of: (r) => (r.plugin as Record<string, unknown> | undefined | null)?.file },
};

/** The 32 symbol groups are fixed slots: they are rewritten in place, never added, removed or moved. */
const FIXED: ReadonlySet<Pf4ConfigListName> = new Set(['SymbolGroup']);

const IPV4_MAX = 0xffffffff;

/** Checks a list record beyond its schema; the message names the field. */
function checkRecord(name: Pf4ConfigListName, record: Record<string, unknown>, args: ArgReader): void {
  const key = KEYS[name];
  if (key) {
    const value = key.of(record);
    if (value === undefined || value === null || value === '') args.fail(`record.${key.field} is required`);
    if (typeof value === 'number' && value < 1) args.fail(`record.${key.field} must be positive`);
  }
  if (name === 'Access') {
    for (const field of ['ipFrom', 'ipTo']) {
      const ip = record[field];
      if (typeof ip === 'number' && (ip < 0 || ip > IPV4_MAX))
        args.fail(`record.${field} must be an IPv4 address (0..${IPV4_MAX})`);
    }
    if (typeof record.ipFrom === 'number' && typeof record.ipTo === 'number' && record.ipFrom > record.ipTo) {
      args.fail('record.ipFrom must not be above record.ipTo');
    }
  }
}

/** Lists whose entries carry server-only fields (a password): kept by a write that replaces the entry. */
const SECRET_KINDS: Partial<Record<Pf4ConfigListName, Pf4ServerOnlyKind>> = { Feeder: 'feeder', Sync: 'sync' };

/**
 * The entry a write stores: the record as given plus, for lists with server-only fields, those of the entry it replaces
 * (the one at `pos`, or the one with the record's key), or empty ones for a new entry. A manager's record cannot carry
 * them (the contract schema refuses them), so a write never changes them.
 */
function withSecretsOf(
  name: Pf4ConfigListName,
  list: OrderedList<Record<string, unknown>>,
  record: Record<string, unknown>,
  pos: number | undefined,
): Record<string, unknown> {
  const kind = SECRET_KINDS[name];
  if (!kind) return record;
  const key = KEYS[name]?.of(record);
  const replaced =
    pos !== undefined && pos >= 0 && pos < list.size
      ? list.at(pos)
      : pos === undefined && (typeof key === 'string' || typeof key === 'number')
        ? list.find(key)
        : undefined;
  const empty = Object.fromEntries(PF4_SERVER_ONLY[kind].map((field) => [field, '']));
  return { ...record, ...empty, ...(replaced ? serverOnlyOf(kind, replaced) : {}) };
}

/** The common settings a manager's own view leaves out: the time source's host and the flood-protection limits. */
export const PF4_COMMON_SENSITIVE: readonly string[] = ['timeSync', 'antiFlood', 'floodControl'];
/** The settings of the common section beyond the summary, in PF4CommonUpdate order. */
const COMMON_SETTINGS = [
  'daylightCorrection',
  'timeZoneReal',
  'timeSync',
  'minClient',
  'minApi',
  'keepEmails',
  'keepTicks',
  'antiFlood',
  'floodControl',
];

/** The summary `{name, owner, build, version, timeZone}`, or the whole section (without the sensitive settings). */
function commonAnswer(world: Pf4World, full: boolean, sensitive: boolean): Record<string, unknown> {
  const summary = world.config.commonRecord();
  if (!full) return summary;
  const out: Record<string, unknown> = { ...summary };
  for (const field of COMMON_SETTINGS)
    if (sensitive || !PF4_COMMON_SENSITIVE.includes(field)) out[field] = world.config.common[field];
  return out;
}

export function registerConfigCommands(registry: CommandRegistry, world: Pf4World): void {
  const plugins = world.config.lists.Plugin;

  /**
   * Writes a loaded plugin's entry, found by `plugin.file`: `enabled` and, for the configuration (`CfgUpdatePlugin`),
   * `managerAccess` when given, and the whole parameter list when `params` is given. Plugins are the server's loaded
   * files: a manager configures and reorders them but can neither add nor remove one (the contract has no
   * CfgDeletePlugin), and what a file says about itself (file, name, version, copyright, configurable) is not
   * configuration, so it is kept. Everything is checked before anything is written.
   */
  const updatePlugin = (args: ArgReader, pos: number | undefined, writes: readonly string[]) => {
    const record = parseRecord<Record<string, unknown>>(contract.PF4PluginParam, args.object('record'), 'record');
    checkRecord('Plugin', record, args);
    const given = record.plugin as Record<string, unknown>;
    if (typeof given.file === 'string' && given.file.length > PLUGIN_FILE_MAX)
      args.fail(`record.plugin.file must be at most ${PLUGIN_FILE_MAX} characters`);
    for (const field of PLUGIN_SWITCHES) {
      const value = given[field];
      if (value !== undefined && value !== 0 && value !== 1) args.fail(`record.plugin.${field} must be 0 or 1`);
    }
    const paramList = Array.isArray(record.params)
      ? (record.params as Array<{ name?: string | null; value?: string | null }>)
      : undefined;
    const problem = paramList ? pluginParamsProblems(paramList)[0] : undefined;
    if (problem) args.fail(`record.${problem.path.join('.')}: ${problem.message}`);
    const current = plugins.find(given.file as string);
    if (!current) throw new CommandError(bad, `plugin ${String(given.file)} not found`);
    const plugin: Record<string, unknown> = { ...(current.plugin as Record<string, unknown>) };
    for (const field of writes) if (given[field] !== undefined) plugin[field] = given[field];
    const params = paramList ? paramList.map((p) => ({ name: p.name, value: p.value ?? '' })) : current.params;
    const { pos: at } = plugins.upsert({ plugin, params }, pos);
    world.journal(`config: plugin ${String(given.file)} at ${at} written`);
    return true;
  };

  for (const name of Object.keys(SCHEMAS) as Pf4ConfigListName[]) {
    const list = world.config.lists[name];
    registry.on(`CfgRequest${name}`, () => list.list());
    if (name === 'Plugin') {
      registry.on('CfgUpdatePlugin', (args) =>
        updatePlugin(args, args.optionalInt('pos', { min: -1 }), PLUGIN_SWITCHES),
      );
    } else {
      registry.on(`CfgUpdate${name}`, (args) => {
        const record = parseRecord<Record<string, unknown>>(SCHEMAS[name], args.object('record'), 'record');
        checkRecord(name, record, args);
        const pos = args.optionalInt('pos', { min: -1 });
        if (FIXED.has(name) && (pos === undefined || pos < 0 || pos >= list.size))
          args.fail(`pos must be between 0 and ${list.size - 1}`);
        const stored = withSecretsOf(name, list, record, pos);
        const { pos: at, added } = list.upsert(stored, pos);
        world.journal(`config: ${list.what} at ${at} ${added ? 'added' : 'written'}`);
        // The symbol groups are cached by a broker (SymbolsGroupsGet); the other lists are read live.
        if (name === 'SymbolGroup') world.emit('symbolGroups', 'update', symbolGroupRecord(at, record));
        return stored;
      });
    }
    const changes = pf4ListChanges(name);
    if (changes.includes('Delete')) {
      registry.on(`CfgDelete${name}`, (args) => {
        const pos = args.int('pos', { min: 0 });
        list.delete(pos);
        world.journal(`config: ${list.what} at ${pos} deleted`);
        return true;
      });
    }
    if (changes.includes('Shift')) {
      registry.on(`CfgShift${name}`, (args) => {
        const pos = args.int('pos', { min: 0 });
        const to = list.shift(pos, args.int('shift'));
        world.journal(`config: ${list.what} at ${pos} moved to ${to}`);
        return true;
      });
    }
  }

  // Both answer the summary; with `full: true` the whole section (every setting CfgUpdateCommon stores), which a
  // manager's own view (ManagerCommon) gives without the sensitive settings.
  registry.on('CfgRequestCommon', (args, _ctx, raw) =>
    commonAnswer(world, optionalBool(args, raw, 'full') === true, true),
  );
  registry.on('ManagerCommon', (args, _ctx, raw) =>
    commonAnswer(world, optionalBool(args, raw, 'full') === true, false),
  );
  registry.on('CfgUpdateCommon', (args) => {
    const update = parseRecord<Record<string, unknown>>(contract.PF4CommonUpdate, args.object('record'), 'record');
    for (const [field, value] of Object.entries(update))
      if (value !== undefined && value !== null) world.config.common[field] = value;
    world.journal('config: common updated');
    return world.config.commonRecord();
  });

  registry.on('CfgRequestTime', () => ({ accessHours: [...world.config.accessHours] }));
  registry.on('CfgUpdateTime', (args) => {
    const update = parseRecord<{ accessHours?: number[] | null }>(
      contract.PF4ServerTime,
      args.object('record'),
      'record',
    );
    if (!update.accessHours || update.accessHours.length !== 168)
      args.fail('record.accessHours must have exactly 168 entries');
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

  registry.on('SrvFeeders', () =>
    world.config.lists.Feeder.list()
      .filter((f) => f.enable === 1)
      .sort((a, b) => String(a.name).localeCompare(String(b.name))),
  );

  registry.on('PluginsGet', () => plugins.list().map((p) => p.plugin));
  registry.on('PluginParamGet', (args) => {
    const pos = args.int('pos', { min: 0 });
    if (pos >= plugins.size)
      throw new CommandError(bad, `plugin position ${pos} is out of range (${plugins.size} plugins)`);
    return plugins.at(pos);
  });
  // The plugin's state and parameters; who may reach it (managerAccess) is the configuration's (CfgUpdatePlugin).
  registry.on('PluginUpdate', (args) => updatePlugin(args, undefined, ['enabled']));
}
