/**
 * The documented order of a snapshot's kinds per family (docs/manager-protocol.md, shared/protocol.ts): a driver's
 * parts are sent in this order whatever order it gives them in. A kind outside its family's snapshot, one the driver
 * does not push, or a kind given twice is a driver bug, refused with an error naming it.
 */
import type { ChangeKind, Family } from '../../shared/protocol.js';
import type { SnapshotPart } from './driver.js';

export const SNAPSHOT_KINDS: Readonly<Record<Family, readonly ChangeKind[]>> = {
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

export function orderSnapshot(
  family: Family,
  events: readonly ChangeKind[],
  parts: readonly SnapshotPart[],
): SnapshotPart[] {
  const order = SNAPSHOT_KINDS[family];
  const seen = new Set<ChangeKind>();
  for (const part of parts) {
    if (!order.includes(part.kind))
      throw new Error(`${part.kind} is not a kind of a ${family} snapshot (${order.join(', ')})`);
    if (!events.includes(part.kind))
      throw new Error(`the snapshot holds ${part.kind}, which the server does not list among its events`);
    if (seen.has(part.kind)) throw new Error(`the snapshot holds ${part.kind} twice`);
    if (!Array.isArray(part.rows)) throw new Error(`the snapshot's ${part.kind} rows are not an array`);
    seen.add(part.kind);
  }
  return [...parts].sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind));
}
