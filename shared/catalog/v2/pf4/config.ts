/**
 * v2 PF4 Config: the server's configuration sections and lists.
 *
 * Sections (common, access hours, backup) are read live and written as Type 1 full replaces: the current section is
 * read, the DTO's supplied fields laid over it, and the merged record written back, so whatever the DTO leaves out
 * (or the spec says is preserved) keeps its server value.
 *
 * Lists are read live (`Request` names) and paged with limit/cursor, sorted ascending by the spec's key where it names
 * one (holidays by (year, month, day, from, symbol), managers by login, firewall rules by (ipFrom, ipTo)) and by the
 * list's own key where the server has one (feeders, gateway accounts and gateway rules by name). Lists the spec gives
 * no order are sorted by a natural key of theirs (data servers by server address, gateway markups by (source,
 * symbol), live updates by (company, type), syncs by (server, from, to)). The server keys only managers, feeders,
 * gateway accounts and gateway rules; the other lists may hold equal keys (two rules for one address range), so every
 * list pages by its key with the entry's place in the server's own order as the last tie-breaker, and a key field
 * the server left empty (null) sorts first (the generic live page of `broker/handlers/interpreter.ts`).
 *
 * Changes address an entry by its place in the server's own list order (`pos`, zero-based), which is the order of
 * the manager interface, not the sorted order of the paged reads. Updates answer the record written, deletes and
 * shifts answer true. Feeder and sync credentials are not part of these records and never come back.
 */
import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { contractBody, intText, pageQuery, position } from '../../fields.js';
import { INT32_MAX, TEXT_MAX } from '../../../records/primitives.js';
import { V2_PF4 as v2 } from '../paths.js';

const IPV4_MAX = 0xffffffff;

/** Fields of the backup section the server keeps whatever a write says: its last-completion times. */
export const BACKUP_PRESERVED = ['fullBackupLastTime', 'archiveLastTime', 'exportLastTime', 'watchTimestamp'] as const;

/** The access-hour matrix: exactly 168 entries (day * 24 + hour, day 0 Sunday); values are passed through. */
const serverTimeBody = (contractBody('PF4ServerTime') as z.ZodObject).extend({
  accessHours: z
    .array(z.number().int('accessHours entries must be integers').min(-2147483648).max(INT32_MAX), {
      error: () => 'accessHours is required: an array of 168 integers',
    })
    .length(168, 'accessHours must have exactly 168 entries (one per hour of the week)'),
});

/** The backup section as sent; its last-completion times are dropped so the server's values survive the replace. */
const backupBody = contractBody('PF4Backup').transform((record) => {
  const out = { ...(record as Record<string, unknown>) };
  for (const field of BACKUP_PRESERVED) delete out[field];
  return out;
});

/** A record of a list the server keys by name: the name is required, and a text field (at most TEXT_MAX characters). */
const namedBody = (record: string) =>
  (contractBody(record) as z.ZodObject).extend({
    name: z
      .string({ error: () => "name is required (the entry's key)" })
      .min(1, "name must not be empty (the entry's key)")
      .max(TEXT_MAX, `name must be at most ${TEXT_MAX} characters`),
  });

/** A manager record: the login is its key, a positive 32-bit integer. */
const managerBody = (contractBody('PF4ManagerRights') as z.ZodObject).extend({
  login: z
    .number({ error: () => "login is required (the manager's key)" })
    .int('login must be an integer')
    .min(1, 'login must be at least 1')
    .max(INT32_MAX, `login must be at most ${INT32_MAX}`),
});

/** A firewall rule: an IPv4 range, ipFrom not above ipTo. */
const ipv4 = (what: string) =>
  z
    .number()
    .int(`${what} must be an integer`)
    .min(0, `${what} must be an IPv4 address (0..${IPV4_MAX})`)
    .max(IPV4_MAX, `${what} must be an IPv4 address (0..${IPV4_MAX})`);
const accessBody = (contractBody('PF4Access') as z.ZodObject)
  .extend({ ipFrom: ipv4('ipFrom').optional(), ipTo: ipv4('ipTo').optional() })
  .refine((r) => r.ipFrom == null || r.ipTo == null || r.ipFrom <= r.ipTo, {
    path: ['ipFrom'],
    message: 'ipFrom must not be above ipTo',
  });

const posParams = z.object({ pos: position('pos') });
/** The 32 symbol groups are fixed slots 0..31. */
const symbolGroupParams = z.object({ pos: intText('pos', 0, 31) });
const shiftQuery = z.object({
  shift: z
    .string({ error: () => 'shift is required: the number of places to move the entry (negative: towards the start)' })
    .pipe(intText('shift')),
});

/** One list read: live, whole list read and paged here by `key`. */
function listRead(list: string, record: string, key: string | readonly string[], summary: string) {
  return defineOperation({
    name: `CfgRequest${list}`,
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/CfgRequest${list}`,
    tag: 'Config',
    summary,
    query: z.object(pageQuery),
    response: `${record}[]`,
    timeout: 'read',
    read: 'live',
    paged: { key },
    // Read whole and paged by the key, the server position breaking ties (a key may repeat or be empty).
    answer: { kind: 'livePage', command: `CfgRequest${list}` },
  });
}

/** Deletes the entry at `pos` of the server's list order. */
function deleteAt(list: string, what: string, extra = '') {
  return defineOperation({
    name: `CfgDelete${list}`,
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/CfgDelete${list}/{pos}`,
    tag: 'Config',
    summary: `Deletes the ${what} at position pos of the server's list order; true when deleted, a position outside the list is refused by the server (InvalidData)${extra}.`,
    params: posParams,
    response: { type: 'boolean' },
    timeout: 'change',
    read: 'live',
    mutating: true,
    answer: { kind: 'live', command: `CfgDelete${list}` },
  });
}

/** Moves the entry at `pos` by `shift` places in the server's list order. */
function shiftAt(list: string, what: string, order = "the server's list order") {
  return defineOperation({
    name: `CfgShift${list}`,
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/CfgShift${list}/{pos}`,
    tag: 'Config',
    summary: `Moves the ${what} at position pos of ${order} to pos + shift (query shift, an integer, negative towards the start); true when moved, a position or destination outside the list is refused by the server (InvalidData).`,
    params: posParams,
    query: shiftQuery,
    response: { type: 'boolean' },
    timeout: 'change',
    read: 'live',
    mutating: true,
    answer: { kind: 'live', command: `CfgShift${list}` },
  });
}

/** Writes the entry at `pos` (inside the list: replaced; equal to its size: appended); answers the record written. */
function updateAt(list: string, record: string, what: string, body: z.ZodType = contractBody(record)) {
  return defineOperation({
    name: `CfgUpdate${list}`,
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/CfgUpdate${list}/{pos}`,
    tag: 'Config',
    summary: `Writes the ${what} at position pos of the server's list order: a position inside the list replaces that entry, the list size appends; answers the record written.`,
    params: posParams,
    body,
    response: record,
    timeout: 'change',
    read: 'live',
    mutating: true,
    answer: { kind: 'live', command: `CfgUpdate${list}` },
  });
}

/** Writes an entry without a position: a keyed list replaces the entry with the record's key or appends, else appends. */
function updateByKey(list: string, record: string, summary: string, body: z.ZodType = contractBody(record)) {
  return defineOperation({
    name: `CfgUpdate${list}`,
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/CfgUpdate${list}`,
    tag: 'Config',
    summary,
    body,
    response: record,
    timeout: 'change',
    read: 'live',
    mutating: true,
    answer: { kind: 'live', command: `CfgUpdate${list}` },
  });
}

export const config = {
  // ---- Sections -------------------------------------------------------------------------------------------------
  CfgRequestCommon: defineOperation({
    name: 'CfgRequestCommon',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/CfgRequestCommon`,
    tag: 'Config',
    summary: 'Common server configuration (name, owner, build, version, time zone), live.',
    response: 'PF4Common',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'CfgRequestCommon' },
  }),
  CfgUpdateCommon: defineOperation({
    name: 'CfgUpdateCommon',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/CfgUpdateCommon`,
    tag: 'Config',
    summary:
      'Type 1 full replace of the common configuration: read live, the PF4CommonUpdate fields supplied laid over it, written back; the bind and web address arrays and the demo, path, rollover and statement settings (not in the DTO) are left untouched, build and version are read-only; answers PF4Common.',
    body: contractBody('PF4CommonUpdate'),
    response: 'PF4Common',
    timeout: 'change',
    read: 'live',
    mutating: true,
    answer: {
      kind: 'replace',
      read: { command: 'CfgRequestCommon', args: () => ({ full: true }) },
      write: { command: 'CfgUpdateCommon' },
      dto: 'PF4CommonUpdate',
    },
  }),
  CfgRequestTime: defineOperation({
    name: 'CfgRequestTime',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/CfgRequestTime`,
    tag: 'Config',
    summary: 'Access hours: 168 entries, index day * 24 + hour (day 0 Sunday), 1 allowed and 0 denied; live.',
    response: 'PF4ServerTime',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'CfgRequestTime' },
  }),
  CfgUpdateTime: defineOperation({
    name: 'CfgUpdateTime',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/CfgUpdateTime`,
    tag: 'Config',
    summary:
      'Type 1 replace of the access hours: accessHours must have exactly 168 entries (else a Validation error naming body.accessHours), values other than 0 and 1 are passed through unvalidated; read live, overlaid, written back so housekeeping fields are preserved; the merged record is echoed.',
    body: serverTimeBody,
    response: 'PF4ServerTime',
    timeout: 'change',
    read: 'live',
    mutating: true,
    answer: {
      kind: 'replace',
      read: { command: 'CfgRequestTime' },
      write: { command: 'CfgUpdateTime' },
      dto: 'PF4ServerTime',
    },
  }),
  CfgRequestBackup: defineOperation({
    name: 'CfgRequestBackup',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/CfgRequestBackup`,
    tag: 'Config',
    summary:
      'Backup configuration (full, archive and export schedules and paths, last-completion times, watchdog pair); the slave-server credential is never answered; live.',
    response: 'PF4Backup',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'CfgRequestBackup' },
  }),
  CfgUpdateBackup: defineOperation({
    name: 'CfgUpdateBackup',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/CfgUpdateBackup`,
    tag: 'Config',
    summary:
      "Type 1 full replace of the backup configuration: read live, the supplied fields laid over it, written back; the slave-server credential and the last-completion times (fullBackupLastTime, archiveLastTime, exportLastTime, watchTimestamp) keep the server's values whatever the body says; the merged record is echoed.",
    body: backupBody,
    response: 'PF4Backup',
    timeout: 'change',
    read: 'live',
    mutating: true,
    answer: {
      kind: 'replace',
      read: { command: 'CfgRequestBackup' },
      write: { command: 'CfgUpdateBackup' },
      dto: 'PF4Backup',
    },
  }),

  // ---- Lists: reads ---------------------------------------------------------------------------------------------
  CfgRequestHoliday: listRead(
    'Holiday',
    'PF4Holiday',
    ['year', 'month', 'day', 'from', 'symbol'],
    'Holidays, live, paged, sorted by (year, month, day, from, symbol) ascending (equal keys in server order, an empty symbol first); the cursor is opaque base64.',
  ),
  CfgRequestManager: listRead(
    'Manager',
    'PF4ManagerRights',
    'login',
    'Manager configurations (rights, groups, IP filter), live, paged, sorted by login ascending.',
  ),
  CfgRequestAccess: listRead(
    'Access',
    'PF4Access',
    ['ipFrom', 'ipTo'],
    'Firewall rules, live, paged, sorted by (ipFrom, ipTo) ascending (equal ranges in server order).',
  ),
  CfgRequestDataServer: listRead(
    'DataServer',
    'PF4DataServer',
    ['server'],
    'Data servers (access points), live, paged, sorted by server address ascending (equal addresses in server order).',
  ),
  CfgRequestFeeder: listRead(
    'Feeder',
    'PF4Feeder',
    'name',
    "Feeder configurations, live, paged, sorted by name ascending (the feeder's key); the credential is never answered.",
  ),
  CfgRequestGatewayAccount: listRead(
    'GatewayAccount',
    'PF4GatewayAccount',
    'name',
    "Gateway accounts, live, paged, sorted by name ascending (the account's key).",
  ),
  CfgRequestGatewayMarkup: listRead(
    'GatewayMarkup',
    'PF4GatewayMarkup',
    ['source', 'symbol'],
    'Gateway markups, live, paged, sorted by (source, symbol) ascending (equal keys in server order).',
  ),
  CfgRequestGatewayRule: listRead(
    'GatewayRule',
    'PF4GatewayRule',
    'name',
    "Gateway rules, live, paged, sorted by name ascending (the rule's key).",
  ),
  CfgRequestLiveUpdate: listRead(
    'LiveUpdate',
    'PF4LiveUpdate',
    ['company', 'type'],
    'LiveUpdate configurations, live, paged, sorted by (company, type) ascending (equal keys in server order).',
  ),
  CfgRequestSync: listRead(
    'Sync',
    'PF4Sync',
    ['server', 'from', 'to'],
    'History synchronisation sources, live, paged, sorted by (server, from, to) ascending (equal keys in server order); the credential is never answered.',
  ),

  // ---- Lists: updates without a position (by key, or appended) -----------------------------------------------------
  CfgUpdateManager: updateByKey(
    'Manager',
    'PF4ManagerRights',
    "Writes a manager configuration by its login (required, positive): replaces the entry with that login or appends a new one; the rights apply at the manager's next login; answers the record written.",
    managerBody,
  ),
  CfgUpdateFeeder: updateByKey(
    'Feeder',
    'PF4Feeder',
    'Writes a feeder configuration by its name (required): replaces the feeder of that name or appends a new one; the credential is not part of the record; answers the record written.',
    namedBody('PF4Feeder'),
  ),
  CfgUpdateGatewayAccount: updateByKey(
    'GatewayAccount',
    'PF4GatewayAccount',
    'Writes a gateway account by its name (required): replaces the account of that name or appends a new one; answers the record written.',
    namedBody('PF4GatewayAccount'),
  ),
  CfgUpdateGatewayRule: updateByKey(
    'GatewayRule',
    'PF4GatewayRule',
    'Writes a gateway rule by its name (required): replaces the rule of that name or appends a new one; answers the record written.',
    namedBody('PF4GatewayRule'),
  ),
  CfgUpdateGatewayMarkup: updateByKey(
    'GatewayMarkup',
    'PF4GatewayMarkup',
    "Adds a gateway markup: the list has no key and the call no position, so the record is appended at the end of the server's list; answers the record written.",
  ),
  CfgUpdateLiveUpdate: updateByKey(
    'LiveUpdate',
    'PF4LiveUpdate',
    "Adds a LiveUpdate configuration: the list has no key and the call no position, so the record is appended at the end of the server's list; answers the record written.",
  ),
  CfgUpdateSync: updateByKey(
    'Sync',
    'PF4Sync',
    "Adds a history synchronisation source: the list has no key and the call no position, so the record is appended at the end of the server's list; the credential is not part of the record; answers the record written.",
  ),

  // ---- Lists: updates by position --------------------------------------------------------------------------------
  CfgUpdateAccess: updateAt('Access', 'PF4Access', 'firewall rule (an IPv4 range, ipFrom not above ipTo)', accessBody),
  CfgUpdateDataServer: updateAt('DataServer', 'PF4DataServer', 'data server'),
  CfgUpdateHoliday: updateAt(
    'Holiday',
    'PF4Holiday',
    'holiday (enabled holidays close trading for their symbol, or All)',
  ),
  CfgUpdateSymbolGroup: defineOperation({
    name: 'CfgUpdateSymbolGroup',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/CfgUpdateSymbolGroup/{pos}`,
    tag: 'Config',
    summary:
      'Rewrites symbol group slot pos (0..31: the 32 groups are fixed slots, never added or removed); answers the record written.',
    params: symbolGroupParams,
    body: contractBody('PF4SymbolGroup'),
    response: 'PF4SymbolGroup',
    timeout: 'change',
    read: 'live',
    mutating: true,
    answer: { kind: 'live', command: 'CfgUpdateSymbolGroup' },
  }),

  // ---- Lists: deletes --------------------------------------------------------------------------------------------
  CfgDeleteAccess: deleteAt('Access', 'firewall rule'),
  CfgDeleteDataServer: deleteAt('DataServer', 'data server'),
  CfgDeleteFeeder: deleteAt('Feeder', 'feeder'),
  CfgDeleteGatewayAccount: deleteAt('GatewayAccount', 'gateway account'),
  CfgDeleteGatewayMarkup: deleteAt('GatewayMarkup', 'gateway markup'),
  CfgDeleteGatewayRule: deleteAt('GatewayRule', 'gateway rule'),
  CfgDeleteHoliday: deleteAt('Holiday', 'holiday'),
  CfgDeleteLiveUpdate: deleteAt('LiveUpdate', 'LiveUpdate configuration'),
  CfgDeleteManager: deleteAt('Manager', 'manager configuration', "; the manager's rights change at its next login"),
  CfgDeleteSymbol: deleteAt('Symbol', 'symbol configuration', ' and while the symbol has open trades; its quotes stop'),
  CfgDeleteSync: deleteAt('Sync', 'synchronisation source'),

  // ---- Lists: shifts ---------------------------------------------------------------------------------------------
  CfgShiftAccess: shiftAt('Access', 'firewall rule'),
  CfgShiftDataServer: shiftAt('DataServer', 'data server'),
  CfgShiftFeeder: shiftAt('Feeder', 'feeder'),
  CfgShiftGatewayAccount: shiftAt('GatewayAccount', 'gateway account'),
  CfgShiftGatewayMarkup: shiftAt('GatewayMarkup', 'gateway markup'),
  CfgShiftGatewayRule: shiftAt('GatewayRule', 'gateway rule'),
  CfgShiftGroup: shiftAt('Group', 'group', "the server's group list"),
  CfgShiftHoliday: shiftAt('Holiday', 'holiday'),
  CfgShiftLiveUpdate: shiftAt('LiveUpdate', 'LiveUpdate configuration'),
  CfgShiftManager: shiftAt('Manager', 'manager configuration'),
  CfgShiftPlugin: shiftAt('Plugin', 'plugin', "the server's plugin list"),
  CfgShiftSymbol: shiftAt('Symbol', 'symbol configuration', "the server's symbol list"),
  CfgShiftSync: shiftAt('Sync', 'synchronisation source'),
};
