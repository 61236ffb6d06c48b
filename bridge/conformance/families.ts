/**
 * What the conformance suite expects of each platform family, as docs/manager-protocol.md states it: the result codes
 * a server answers in the situations the suite provokes, the snapshot's kinds in their documented order with each
 * kind's key field, and the fields that follow the quote (left out wherever a cached record is compared with a live
 * read, as a broker recomputes them). One table per fact, so a rule never spells a code or a key itself.
 */
import type { ChangeKind, Family } from '../../shared/protocol.js';
import { PF4_RESULT, PF5_RESULT } from '../../shared/resultCodes.js';

export interface FamilyCodes {
  /** An unknown login or a wrong password at login. */
  refusedLogin: number;
  /** Any command before login, Ping included. */
  noRights: number;
  /** Bad arguments, a malformed or second login, an unknown command. */
  badArgs: number;
  /** An unknown key (PF4 answers it as bad arguments). */
  notFound: number;
}

export const CODES: Record<Family, FamilyCodes> = {
  PF4: {
    refusedLogin: PF4_RESULT.InvalidData,
    noRights: PF4_RESULT.NotEnoughRights,
    badArgs: PF4_RESULT.InvalidData,
    notFound: PF4_RESULT.InvalidData,
  },
  PF5: {
    refusedLogin: PF5_RESULT.AuthAccountInvalid,
    noRights: PF5_RESULT.ErrPermissions,
    badArgs: PF5_RESULT.ErrParams,
    notFound: PF5_RESULT.ErrNotfound,
  },
};

/** Every numeric code of the family's result-code table. */
export const RESULT_CODES: Record<Family, ReadonlySet<number>> = {
  PF4: new Set(Object.values(PF4_RESULT)),
  PF5: new Set(Object.values(PF5_RESULT)),
};

/** The snapshot's kinds in the documented order ("The snapshot", docs/manager-protocol.md). */
export const SNAPSHOT_KINDS: Record<Family, readonly ChangeKind[]> = {
  PF4: [
    'users',
    'trades',
    'ticks',
    'symbols',
    'groups',
    'margin',
    'online',
    'news',
    'symbolGroups',
    'symbolSessions',
    'symbolInfo',
  ],
  PF5: ['users', 'positions', 'orders', 'deals', 'ticks', 'symbols', 'groups'],
};

/** The key field of each cached kind: a delete names it, a put replaces the record with the same value. */
export const KEY_FIELDS: Record<Family, Partial<Record<ChangeKind, string>>> = {
  PF4: {
    users: 'login',
    trades: 'order',
    ticks: 'symbol',
    symbols: 'symbol',
    groups: 'group',
    margin: 'login',
    online: 'login',
    news: 'key',
    symbolGroups: 'pos',
    symbolSessions: 'symbol',
    symbolInfo: 'symbol',
  },
  PF5: {
    users: 'login',
    positions: 'position',
    orders: 'order',
    deals: 'deal',
    ticks: 'symbol',
    symbols: 'symbol',
    groups: 'group',
  },
};

/** Key fields that are int64 on the wire (PF5 logins and tickets): bare digits, never quoted. */
export const INT64_KEYS: Record<Family, Partial<Record<ChangeKind, string>>> = {
  PF4: {},
  PF5: { users: 'login', positions: 'position', orders: 'order', deals: 'deal' },
};

/**
 * Fields that move with the quote or the clock without an event of their kind: a trade's profit and close price, a
 * position's and an order's current price, a margin level's figures and time, and a PF4 symbol summary's prices
 * (a consumer derives them from ticks). Never compared.
 */
export const VOLATILE_FIELDS: Record<Family, Partial<Record<ChangeKind, readonly string[]>>> = {
  PF4: {
    trades: ['profit', 'closePrice'],
    margin: ['updated', 'equity', 'free', 'level'],
    symbolInfo: ['spread', 'direction', 'bid', 'ask', 'high', 'low', 'lastTime'],
  },
  PF5: {
    positions: ['priceCurrent', 'profit'],
    orders: ['priceCurrent'],
  },
};

/** Kinds never compared with live reads: ticks move all the time. */
export const UNCOMPARED_KINDS: readonly ChangeKind[] = ['ticks'];
