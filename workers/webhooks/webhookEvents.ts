/**
 * What a webhook endpoint hears of: the event types, and how a platform's change stream (`shared/streams.ts`, the
 * events the SSE and hub streams carry, in the same shapes) becomes webhook events. Each event names its platform and
 * the account it concerns (`login`: deliveries keep each account's order), carries the record as the v2 stream shapes
 * it, and has an id derived from the event itself (platform, type, record): the same change seen twice — once from the
 * stream and once again when a gap is closed against a snapshot — has the same `webhook-id`, so a receiver that
 * deduplicates by id sees it once.
 */
import type { Family } from '../../shared/protocol.js';
import type { StreamEvent } from '../../shared/streams.js';
import type { TEST_EVENT_TYPE, WebhookEventType } from '../../shared/catalog/webhooks.js';

/** One event before it is addressed to endpoints. */
export interface WebhookEvent {
  /** `evt_` and 32 hex digits of SHA-256 over the platform, the type and the record (`eventId`). */
  id: string;
  type: WebhookEventType | typeof TEST_EVENT_TYPE;
  platform: string;
  family: Family | null;
  /** The account the event concerns; null for the platform's own events. Deliveries keep each account's order. */
  login: number | null;
  /** ISO time the gateway saw the event. */
  occurredAt: string;
  data: Record<string, unknown>;
}

type Rec = Record<string, unknown>;
type Change = 'Added' | 'Updated' | 'Deleted';

/** A deal is a fact: it is added once; a deal leaving the server's recent deals is no event. */
const RECORD_TYPES: Record<string, Partial<Record<Change, WebhookEventType>>> = {
  users: { Added: 'account.created', Updated: 'account.changed', Deleted: 'account.deleted' },
  trades: { Added: 'trade.opened', Updated: 'trade.changed', Deleted: 'trade.closed' },
  positions: { Added: 'position.opened', Updated: 'position.changed', Deleted: 'position.closed' },
  orders: { Added: 'order.placed', Updated: 'order.changed', Deleted: 'order.removed' },
  deals: { Added: 'deal.added' },
};

/** A PF5 deal of these actions is a balance operation, not a trade's deal. */
const BALANCE_ACTIONS = new Set<unknown>(['Balance', 'Credit']);

/** An event of the change stream without its id and time: what `identify` completes. */
export interface UnidentifiedEvent {
  type: WebhookEventType;
  login: number | null;
  data: Rec;
}

/**
 * The webhook events one stream event gives: a record change gives one (a PF5 balance or credit deal gives a
 * `balance.operation`); a status gives `platform.down` or `platform.up`; a margin event gives `margin.call` or
 * `margin.stopOut` when it enters the level (PF5), or when the account's level type becomes one (PF4, whose margin
 * rows carry the level: `previousLevel` is the level type the account had before, which the caller keeps). Ticks and
 * symbol changes give none.
 */
export function webhookEventsOf(family: Family, event: StreamEvent, previousLevel?: string): UnidentifiedEvent[] {
  if (event.topic === 'ticks' || event.topic === 'symbols') return [];
  if (event.topic === 'status') {
    return [{ type: event.data.connected ? 'platform.up' : 'platform.down', login: null, data: { ...event.data } }];
  }
  const data = event.data;
  const login = typeof data.login === 'number' ? data.login : null;
  if (event.topic === 'margin') {
    if (family === 'PF5') {
      if (data.direction !== 'Enter') return [];
      const type = data.type === 'MarginCall' ? 'margin.call' : data.type === 'StopOut' ? 'margin.stopOut' : null;
      return type ? [{ type, login, data: { ...data } }] : [];
    }
    const level = data.levelType;
    if (level === previousLevel) return [];
    const type = level === 'MarginCall' ? 'margin.call' : level === 'StopOut' ? 'margin.stopOut' : null;
    return type ? [{ type, login, data: { ...data } }] : [];
  }
  const type = RECORD_TYPES[event.topic]?.[data.kind as Change];
  if (!type) return [];
  const { kind: _kind, ...record } = data;
  if (event.topic === 'deals' && BALANCE_ACTIONS.has(record.action)) {
    return [{ type: 'balance.operation', login, data: balanceOperationOfDeal(record) }];
  }
  return [{ type, login, data: record }];
}

/** A PF5 balance or credit deal as a `balance.operation` (the same fields a PF4 history entry gives). */
function balanceOperationOfDeal(deal: Rec): Rec {
  return {
    ticket: deal.deal,
    login: deal.login,
    type: deal.action,
    amount: deal.profit,
    comment: deal.comment,
    time: deal.time,
  };
}

/** A PF4 history entry (`TradesUserHistory`) as a `balance.operation`, or null for a trade. */
export function balanceOperationOfHistory(entry: Rec): UnidentifiedEvent | null {
  const command = entry.cmd ?? entry.tradeCommand;
  if (command !== 'Balance' && command !== 'Credit') return null;
  const login = typeof entry.login === 'number' ? entry.login : null;
  return {
    type: 'balance.operation',
    login,
    data: {
      ticket: entry.order,
      login: entry.login,
      type: command,
      amount: entry.profit,
      comment: entry.comment,
      time: entry.closeTime ?? entry.openTime,
    },
  };
}

/** JSON with every object's members in name order: the same record gives the same text whatever its field order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Rec)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * The event's id: SHA-256 over platform, type and the canonical record. Platform up and down carry nothing that
 * tells one outage from the next, so their id also takes `distinguisher` (the stream position the change was seen at).
 */
export async function eventId(platform: string, event: UnidentifiedEvent, distinguisher = ''): Promise<string> {
  const text = `${platform}\n${event.type}\n${canonicalJson(event.data)}\n${distinguisher}`;
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
  let hex = '';
  for (const byte of digest.subarray(0, 16)) hex += byte.toString(16).padStart(2, '0');
  return `evt_${hex}`;
}

/** The JSON body of a delivery: what a receiver parses. */
export function deliveryBody(event: WebhookEvent): string {
  return JSON.stringify({
    id: event.id,
    type: event.type,
    timestamp: event.occurredAt,
    platform: event.platform,
    family: event.family,
    data: event.data,
  });
}
