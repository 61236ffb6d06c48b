/**
 * A platform's change events as stream events (`shared/streams.ts`): each payload is built from a fixed field list,
 * never by copying the record, so what the trading server sends beyond the list (password hashes, API secrets, ...)
 * cannot reach a stream client. Resync frames and kinds no stream carries give null.
 */
import type { Family, ManagerEvent } from '../../shared/protocol.js';
import type { ChangeKind, StreamEvent } from '../../shared/streams.js';
import { isClosedTrade } from '../cache/pumpCache.js';

type Rec = Record<string, unknown>;

const KIND: Record<string, ChangeKind | undefined> = { add: 'Added', update: 'Updated', delete: 'Deleted' };

/** The listed fields of `record`, renamed where a pair is given (`[out, in]`); absent fields are left out. */
function pick(record: Rec, fields: readonly (string | readonly [string, string])[]): Rec {
  const out: Rec = {};
  for (const f of fields) {
    const [to, from] = typeof f === 'string' ? [f, f] : f;
    const v = record[from];
    if (v !== undefined) out[to] = v;
  }
  return out;
}

const PF4_TRADE = [
  'order',
  'login',
  'symbol',
  ['cmd', 'tradeCommand'],
  'volumeLots',
  'openPrice',
  'openTime',
  'sl',
  'tp',
  'closePrice',
  'closeTime',
  'commission',
  'storage',
  'profit',
  'taxes',
  'comment',
] as const;
const PF4_USER = [
  'login',
  'group',
  'name',
  'country',
  'leverage',
  'balance',
  'credit',
  ['regDate', 'registrationDate'],
  'lastDate',
  'email',
  'phone',
  'comment',
] as const;
const PF4_SYMBOL = [
  'symbol',
  'description',
  'currency',
  'digits',
  'tradeMode',
  'spread',
  'stopsLevel',
  'freezeLevel',
  'contractSize',
  'tickValue',
  'tickSize',
  'marginInitial',
  'marginMaintenance',
] as const;
const PF4_MARGIN = [
  'login',
  'group',
  'leverage',
  'updated',
  'balance',
  'equity',
  'margin',
  'free',
  'level',
  'controllingType',
  'levelType',
] as const;
const PF5_POSITION = [
  'position',
  'login',
  'symbol',
  'action',
  'digits',
  'contractSize',
  'timeCreate',
  'timeUpdate',
  'priceOpen',
  'priceCurrent',
  'priceSL',
  'priceTP',
  'volume',
  'profit',
  'storage',
  'comment',
  'reason',
] as const;
const PF5_ORDER = [
  'order',
  'login',
  'symbol',
  'digits',
  'state',
  'reason',
  'timeSetup',
  'timeExpiration',
  'timeDone',
  'type',
  'typeFill',
  'typeTime',
  'priceOrder',
  'priceTrigger',
  'priceCurrent',
  'priceSL',
  'priceTP',
  'volumeInitial',
  'volumeCurrent',
  'positionID',
  'comment',
] as const;
const PF5_DEAL = [
  'deal',
  'login',
  'order',
  'action',
  'entry',
  'digits',
  'contractSize',
  'time',
  'symbol',
  'price',
  'priceSL',
  'priceTP',
  'volume',
  'volumeClosed',
  'profit',
  'storage',
  'commission',
  'fee',
  'positionID',
  'comment',
  'reason',
] as const;
const PF5_USER = [
  'login',
  'group',
  'name',
  'company',
  'country',
  'city',
  'phone',
  'eMail',
  'comment',
  'leverage',
  'status',
  'registration',
  'lastAccess',
  'balance',
  'credit',
] as const;
const PF5_MARGIN_TYPES = new Set<unknown>(['MarginCall', 'StopOut']);
const PF5_MARGIN_DIRECTIONS = new Set<unknown>(['Enter', 'Leave']);

/** PF4 account flags: bit 0 enabled, bit 1 read-only (trading disabled for the account). */
const PF4_ENABLED = 1;
const PF4_READ_ONLY = 2;

export function streamEvent(family: Family, event: ManagerEvent): StreamEvent | null {
  const kind = KIND[event.op];
  if (!kind || typeof event.record !== 'object' || event.record === null) return null;
  const r = event.record as Rec;
  if (event.event === 'ticks') {
    if (typeof r.symbol !== 'string' || event.op === 'delete') return null;
    return {
      topic: 'ticks',
      data: { symbol: r.symbol, bid: r.bid as number, ask: r.ask as number, lastTime: String(r.time) },
    };
  }
  if (family === 'PF4') {
    switch (event.event) {
      case 'trades': {
        // A trade the server sends closed as an update has left the open trades (the cache drops it): it is gone.
        return { topic: 'trades', data: { kind: isClosedTrade(r) ? 'Deleted' : kind, ...pick(r, PF4_TRADE) } };
      }
      case 'users': {
        const data: Rec = { kind, ...pick(r, PF4_USER) };
        if (typeof r.enableFlags === 'number') {
          data.enabled = (r.enableFlags & PF4_ENABLED) !== 0;
          data.readOnly = (r.enableFlags & PF4_READ_ONLY) !== 0;
        }
        return { topic: 'users', data };
      }
      case 'symbols':
        return { topic: 'symbols', data: { kind, ...pick(r, PF4_SYMBOL) } };
      case 'margin': {
        // A margin row goes when the account's last trade does: nothing left to call a margin on.
        if (event.op === 'delete') return null;
        const data = pick(r, PF4_MARGIN);
        if (typeof r.volume === 'number') data.volumeLots = r.volume / 100;
        return { topic: 'margin', data };
      }
      default:
        return null;
    }
  }
  switch (event.event) {
    case 'positions':
      return { topic: 'positions', data: { kind, ...pick(r, PF5_POSITION) } };
    case 'orders':
      return { topic: 'orders', data: { kind, ...pick(r, PF5_ORDER) } };
    case 'deals':
      return { topic: 'deals', data: { kind, ...pick(r, PF5_DEAL) } };
    case 'users':
      return { topic: 'users', data: { kind, ...pick(r, PF5_USER) } };
    case 'margin': {
      // An account crossing its group's margin-call or stop-out level: who, which level, which way; nothing more.
      if (event.op !== 'add' || !PF5_MARGIN_TYPES.has(r.type) || !PF5_MARGIN_DIRECTIONS.has(r.direction)) return null;
      return { topic: 'margin', data: { login: r.login, type: r.type, direction: r.direction } };
    }
    default:
      return null;
  }
}
