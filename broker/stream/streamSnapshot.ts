/**
 * A subscription's snapshot (`SubscribeArgs.snapshot`, shared/frames.ts): the records of a platform's record topics as
 * its cache holds them, each shaped exactly as a live `Added` event of its topic (`streamShape.ts`), so a subscriber
 * compares the two alike.
 */
import { SNAPSHOT_TOPICS } from '../../shared/frames.js';
import type { ChangeKind, Family } from '../../shared/protocol.js';
import type { StreamEvent, StreamTopic } from '../../shared/streams.js';
import type { PumpCache } from '../cache/pumpCache.js';
import { streamEvent } from './streamShape.js';

export function snapshotEvents(family: Family, cache: PumpCache, topics: readonly StreamTopic[]): StreamEvent[] {
  const events: StreamEvent[] = [];
  for (const topic of topics) {
    if (!SNAPSHOT_TOPICS.includes(topic)) continue;
    const table = cache.table(topic);
    if (!table) continue;
    for (const record of table.values()) {
      const shaped = streamEvent(family, { event: topic as ChangeKind, op: 'add', record });
      if (shaped) events.push(shaped);
    }
  }
  return events;
}
