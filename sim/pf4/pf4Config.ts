/**
 * The configuration of one simulated PF4 server: the single-record sections (common, access hours, backup) and the
 * ordered list sections (holidays, managers, firewall rules, data servers, feeders, gateway accounts, markups and
 * rules, live update, sync, plugins, symbol groups). Every list section is an OrderedList, so update, delete and
 * shift by position behave the same everywhere. Feeders and history sources carry their password, and the backup section
 * the watchdog pair's (slave server's) password, as server-only fields (serverOnlyFields.ts): sent as the server holds
 * them, never taken from a manager's record, and kept across its writes.
 */
import { PF4_RESULT } from '../../shared/resultCodes.js';
import { SECURITY_GROUP_NAMES } from '../feed/instruments.js';
import type { ManagerConfig } from '../config/simConfig.js';
import { OrderedList } from '../world/orderedList.js';
import { iso, WORLD_ANCHOR_MS } from '../world/people.js';
import { derivedSecret } from './serverOnlyFields.js';

const bad = PF4_RESULT.InvalidData;
type Rec = Record<string, unknown>;

/** The boolean manager rights of a PF4 manager record, in contract order. */
export const PF4_MANAGER_RIGHTS = [
  'manager',
  'money',
  'online',
  'riskMan',
  'broker',
  'admin',
  'logs',
  'reports',
  'trades',
  'marketWatch',
  'email',
  'userDetails',
  'seeTrades',
  'news',
  'plugins',
  'market',
  'notifications',
  'serverReports',
  'techSupport',
] as const;

/** The list sections, by the name the Cfg* commands use (CfgRequestHoliday, CfgShiftHoliday, ...). */
export const PF4_CONFIG_LISTS = [
  'Holiday',
  'Manager',
  'Access',
  'DataServer',
  'Feeder',
  'GatewayAccount',
  'GatewayMarkup',
  'GatewayRule',
  'LiveUpdate',
  'Sync',
  'Plugin',
  'SymbolGroup',
] as const;
export type Pf4ConfigListName = (typeof PF4_CONFIG_LISTS)[number];

export type Pf4ListChange = 'Update' | 'Delete' | 'Shift';

/**
 * The change commands a list has (CfgUpdate<List>, CfgDelete<List>, CfgShift<List>): the 32 symbol groups are fixed
 * slots, only rewritten in place; the plugins are the server's loaded files, configured and reordered but never removed.
 */
export function pf4ListChanges(list: Pf4ConfigListName): Pf4ListChange[] {
  if (list === 'SymbolGroup') return ['Update'];
  if (list === 'Plugin') return ['Update', 'Shift'];
  return ['Update', 'Delete', 'Shift'];
}

export class Pf4Config {
  common: Rec;
  /** Build, version and the settings CfgUpdateCommon leaves untouched. */
  private readonly commonFixed: Rec;
  accessHours: number[];
  backup: Rec;
  readonly lists: Record<Pf4ConfigListName, OrderedList<Rec>>;

  constructor(serverName: string, build: number, managers: readonly ManagerConfig[], seed = 0) {
    this.common = {
      name: serverName,
      owner: 'Simulated Markets Ltd',
      timeZone: 0,
      daylightCorrection: 0,
      timeZoneReal: 0,
      timeSync: 'time.example.com',
      minClient: 1400,
      minApi: 1400,
      keepEmails: 30,
      keepTicks: 7,
      antiFlood: 0,
      floodControl: 0,
    };
    this.commonFixed = { build, version: 4 };
    // Trading servers accept client connections every hour of the week by default.
    this.accessHours = Array.from({ length: 168 }, () => 1);
    this.backup = {
      fullBackupPath: '/backup/full',
      fullBackupPeriod: 'D1',
      fullBackupStore: 'Mn1',
      fullBackupShift: 0,
      fullBackupLastTime: iso(WORLD_ANCHOR_MS),
      externalPath: '',
      archivePeriod: 'H1',
      archiveStore: 'W1',
      archiveShift: 0,
      archiveLastTime: iso(WORLD_ANCHOR_MS),
      exportSecurities: '*',
      exportPath: '/backup/export',
      exportPeriod: 'M5',
      exportLastTime: iso(WORLD_ANCHOR_MS),
      watchRole: 'StandAlone',
      watchOpposite: '',
      watchIp: 0,
      watchState: 'Disconnected',
      watchFailover: 'Off',
      watchTimeout: 60,
      watchLogin: 0,
      watchTimestamp: 0,
      watchPassword: derivedSecret(seed, 'watchdog'),
    };
    const list = (what: string, initial: Rec[], key?: (r: Rec) => string | number) =>
      new OrderedList<Rec>(what, bad, key, initial);
    this.lists = {
      Holiday: list('holiday', [
        { year: 2025, month: 12, day: 25, from: 0, to: 0, symbol: 'All', description: 'Christmas Day', enable: true },
        { year: 2026, month: 1, day: 1, from: 0, to: 0, symbol: 'All', description: 'New Year', enable: true },
        {
          year: 2025,
          month: 7,
          day: 4,
          from: 0,
          to: 1020,
          symbol: 'US30',
          description: 'Independence Day',
          enable: true,
        },
      ]),
      Manager: list(
        'manager',
        managers.map((m) => managerRecord(m)),
        (r) => r.login as number,
      ),
      Access: list('access rule', [
        { action: 1, ipFrom: ip('127.0.0.1'), ipTo: ip('127.0.0.1'), comment: 'loopback' },
        { action: 1, ipFrom: ip('10.0.0.0'), ipTo: ip('10.255.255.255'), comment: 'office network' },
        { action: 0, ipFrom: ip('192.0.2.0'), ipTo: ip('192.0.2.255'), comment: 'blocked test range' },
      ]),
      DataServer: list('data server', [
        {
          server: 'access1.example.com:443',
          ip: 0,
          description: 'Access point Europe',
          isProxy: 0,
          priority: 0,
          loading: 0,
          ipInternal: 0,
          isWitness: 0,
        },
        {
          server: 'access2.example.com:443',
          ip: 0,
          description: 'Access point Asia',
          isProxy: 0,
          priority: 1,
          loading: 0,
          ipInternal: 0,
          isWitness: 0,
        },
      ]),
      Feeder: list(
        'feeder',
        [
          {
            name: 'Main quotes',
            file: 'quotes.feed',
            server: 'feed.example.com:2222',
            login: 'feed',
            keywords: '',
            enable: 1,
            dataFeedMode: 'Quotes',
            timeout: 120,
            timeoutReconnect: 5,
            timeoutSleep: 60,
            attempsSleep: 10,
            newsLangId: 0,
            password: derivedSecret(seed, 'feeder/Main quotes'),
          },
          {
            name: 'News wire',
            file: 'news.feed',
            server: 'news.example.com:2223',
            login: 'news',
            keywords: 'forex',
            enable: 1,
            dataFeedMode: 'News',
            timeout: 300,
            timeoutReconnect: 10,
            timeoutSleep: 60,
            attempsSleep: 10,
            newsLangId: 0,
            password: derivedSecret(seed, 'feeder/News wire'),
          },
        ],
        (r) => r.name as string,
      ),
      GatewayAccount: list(
        'gateway account',
        [
          {
            enable: true,
            name: 'LP Prime',
            id: 1,
            type: 0,
            login: 9001,
            address: 'lp.example.com:443',
            notifyLogins: [],
            flags: 'Quotes',
          },
        ],
        (r) => r.name as string,
      ),
      GatewayMarkup: list('gateway markup', [
        {
          enable: true,
          source: 'LP Prime',
          symbol: 'EURUSD',
          accountName: 'LP Prime',
          accountId: 1,
          bidMarkup: -2,
          askMarkup: 2,
        },
      ]),
      GatewayRule: list(
        'gateway rule',
        [
          {
            enable: true,
            name: 'Forex to LP',
            requestSymbol: '*',
            requestGroup: 'real\\*',
            exeAccountName: 'LP Prime',
            exeAccountId: 1,
            exeMaxDeviation: 10,
            exeMaxProfitSlippage: 5,
            exeMaxProfitSlippageLots: 10,
            exeMaxLosingSlippage: 5,
            exeMaxLosingSlippageLots: 10,
            exeAccountPos: 0,
            exeVolumePercent: 100,
            exeFlags: 0,
          },
        ],
        (r) => r.name as string,
      ),
      LiveUpdate: list('live update', [
        {
          company: 'Simulated Markets Ltd',
          path: '/liveupdate/terminal',
          version: 4,
          build: build,
          maxConnect: 100,
          connections: 0,
          type: 0,
          enable: 1,
          totalFiles: 42,
        },
      ]),
      Sync: list('sync', [
        {
          server: 'history.example.com:443',
          login: 'sync',
          enable: 0,
          mode: 'Update',
          from: 0,
          to: 0,
          securities: '*',
          timeCorrection: 0,
          password: derivedSecret(seed, 'sync/history.example.com:443'),
        },
      ]),
      Plugin: list(
        'plugin',
        [
          pluginRecord('echo.dll', 'Echo', 'answers ExternalCommand calls with their payload', 1),
          pluginRecord('risk.dll', 'Risk limits', 'checks exposure limits', 0),
        ],
        (r) => (r.plugin as Rec).file as string,
      ),
      SymbolGroup: list(
        'symbol group',
        Array.from({ length: 32 }, (_, pos) => ({
          name: SECURITY_GROUP_NAMES[pos] ?? '',
          description: SECURITY_GROUP_NAMES[pos] ? `${SECURITY_GROUP_NAMES[pos]} instruments` : '',
        })),
      ),
    };
  }

  commonRecord(): Rec {
    return {
      name: this.common.name,
      owner: this.common.owner,
      build: this.commonFixed.build,
      version: this.commonFixed.version,
      timeZone: this.common.timeZone,
    };
  }

  /** The rights a manager has by this configuration, or undefined when it has no record here. */
  managerRights(login: number): string[] | undefined {
    const record = this.lists.Manager.find(login);
    return record ? PF4_MANAGER_RIGHTS.filter((right) => record[right] === true) : undefined;
  }
}

function managerRecord(manager: ManagerConfig): Rec {
  const has = (right: string) => manager.rights === 'all' || manager.rights.includes(right);
  const record: Rec = {
    login: manager.login,
    name: `Manager ${manager.login}`,
    groups: '*',
    mailBox: `manager${manager.login}`,
    infoDepth: 3,
  };
  for (const right of PF4_MANAGER_RIGHTS) record[right] = has(right);
  return { ...record, ipFilter: 0, ipFrom: 0, ipTo: 0 };
}

function pluginRecord(file: string, name: string, about: string, managerAccess: number): Rec {
  return {
    plugin: {
      file,
      name,
      version: 100,
      copyright: 'Simulated Markets Ltd',
      enabled: 1,
      configurable: 1,
      managerAccess,
    },
    params: [
      { name: 'About', value: about },
      { name: 'Enabled', value: '1' },
    ],
  };
}

/** An IPv4 address as the unsigned number firewall rules carry. */
export function ip(text: string): number {
  return text.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}
