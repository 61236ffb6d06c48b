/**
 * The `Idempotency-Key` records of one platform gateway object: the first final answer to a key, kept for the
 * retention time and replayed to repeats of the same request, with an expiry index that an alarm purges. A record is
 * answered only while it has not expired, whether or not the purge has run yet. Works on the part of Durable Object
 * storage it needs and on an injected clock, so it is testable outside workerd.
 */
import type { GatewayResponse, StoredResponse } from './messages.js';

/** The subset of DurableObjectStorage the store uses. */
export interface IdempotencyStorage {
  get<T = unknown>(key: string): Promise<T | undefined>;
  put<T>(entries: Record<string, T>): Promise<void>;
  delete(keys: string[]): Promise<number>;
  list<T = unknown>(options: { prefix: string; end?: string; limit?: number }): Promise<Map<string, T>>;
  getAlarm(): Promise<number | null>;
  setAlarm(scheduledTime: number): Promise<void>;
}

export const RECORD_PREFIX = 'idem:';
export const EXPIRY_PREFIX = 'exp:';
/** Fixed-width time so that lexical order of expiry index keys is time order. */
const stamp = (ms: number) => String(ms).padStart(15, '0');
const PURGE_BATCH = 500;

/** What a key holds for a request: its stored answer, a refusal (the key was used for another request), or nothing. */
export type Lookup =
  | { kind: 'replay'; response: GatewayResponse }
  | { kind: 'conflict' }
  | { kind: 'none' };

export class IdempotencyStore {
  constructor(private readonly storage: IdempotencyStorage, private readonly clock: () => number = Date.now) {}

  async lookup(key: string, requestHash: string): Promise<Lookup> {
    const stored = await this.storage.get<StoredResponse>(RECORD_PREFIX + key);
    // An expired record is gone for every purpose, even while it waits for the purge.
    if (!stored || stored.expires <= this.clock()) return { kind: 'none' };
    if (stored.requestHash !== requestHash) return { kind: 'conflict' };
    return { kind: 'replay', response: stored.response };
  }

  /** Stores the first final answer under the key for `retentionHours`, and arms the purge for it. */
  async store(key: string, requestHash: string, response: GatewayResponse, retentionHours: number): Promise<void> {
    const created = this.clock();
    const expires = created + retentionHours * 3_600_000;
    const record: StoredResponse = { requestHash, response, created, expires };
    await this.storage.put<unknown>({ [RECORD_PREFIX + key]: record, [`${EXPIRY_PREFIX}${stamp(expires)}:${key}`]: key });
    const alarm = await this.storage.getAlarm();
    // A shorter retention than the records before (a changed setting) must not wait for their later alarm.
    if (alarm === null || alarm > expires) await this.storage.setAlarm(expires);
  }

  /** Deletes the records whose time has come through the expiry index, then re-arms for the next one. */
  async purge(): Promise<void> {
    const now = this.clock();
    for (;;) {
      const due = await this.storage.list<string>({ prefix: EXPIRY_PREFIX, end: `${EXPIRY_PREFIX}${stamp(now + 1)}`, limit: PURGE_BATCH });
      if (due.size === 0) break;
      const doomed: string[] = [];
      for (const [indexKey, key] of due) {
        doomed.push(indexKey);
        // A key reused after expiry has a newer record: only delete the record this index entry describes.
        const record = await this.storage.get<StoredResponse>(RECORD_PREFIX + key);
        if (record && record.expires <= now) doomed.push(RECORD_PREFIX + key);
      }
      await this.storage.delete(doomed);
      if (due.size < PURGE_BATCH) break;
    }
    const next = await this.storage.list<string>({ prefix: EXPIRY_PREFIX, limit: 1 });
    const first = next.keys().next();
    if (!first.done) await this.storage.setAlarm(Number(first.value.slice(EXPIRY_PREFIX.length, EXPIRY_PREFIX.length + 15)));
  }

  /** How many records and expiry index entries are stored: for operators and the retention tests. */
  async stats(): Promise<{ records: number; expiries: number }> {
    const records = (await this.storage.list({ prefix: RECORD_PREFIX })).size;
    const expiries = (await this.storage.list({ prefix: EXPIRY_PREFIX })).size;
    return { records, expiries };
  }
}
