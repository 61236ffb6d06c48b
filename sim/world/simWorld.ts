/**
 * What every simulated world (PF4 or PF5) offers the protocol layer: a consistent snapshot for resync, its family's
 * commands, counts for the control channel, and a sink through which it reports every change as an event.
 */
import type { EventKind, Family } from '../../shared/protocol.js';
import type { Quote } from '../feed/quoteFeed.js';
import type { CommandRegistry } from './commandRegistry.js';

export type ChangeOp = 'add' | 'update' | 'delete';

/** Receives every change of what a broker caches. `record` is the wire record (key fields only for delete). */
export type ChangeSink = (kind: Exclude<EventKind, 'resync'>, op: ChangeOp, record: unknown) => void;

/** One kind of a resync snapshot: the rows as they were at login, turned into wire records chunk by chunk. */
export interface SnapshotPart {
  kind: Exclude<EventKind, 'resync'>;
  rows: readonly unknown[];
  toWire: (row: never) => unknown;
}

/** What a command knows about the manager session that sent it. */
export interface CommandContext {
  managerLogin: number;
  rights: ReadonlySet<string>;
  /** State a server keeps per manager connection (sync sessions, the daily-sync snapshot); dropped with it. */
  session: Map<string, unknown>;
}

export interface SimWorld {
  readonly family: Family;
  /** Taken synchronously at login so that every later change event is newer than the snapshot. */
  snapshot(): SnapshotPart[];
  commands(): CommandRegistry;
  /** Record counts for the control channel and the resync end frame. */
  counts(): Record<string, number>;
  /** Ticks the feed produced since start. */
  ticksEmitted(): number;
  /** Ticks the feed's clock owed but a busy process could not emit. */
  ticksDropped(): number;
  /** The feed moved a quote. */
  onQuote(quote: Quote): void;
  start(): void;
  stop(): void;
  /** Records a line in the server journal (PF4 JournalRequest); worlds without a journal leave it out. */
  journal?(message: string, ip?: string, code?: string): void;
  /**
   * What to send after held ticks of `symbol` were coalesced (a consumer missed some): PF4 sends the symbol's summary,
   * whose day high and low and direction the missing ticks moved. Worlds without one leave it out.
   */
  coalescedTick?(symbol: string): { kind: Exclude<EventKind, 'resync'>; record: unknown } | undefined;
  /** Rights a manager has by the server's own configuration; undefined leaves the simulator config's rights. */
  managerRights?(login: number): string[] | undefined;
}
