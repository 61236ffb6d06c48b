/**
 * Positions in a platform's change stream (docs/regions.md, "Read your writes"): how far a broker's pumping cache,
 * or an edge replica of it, has come. A position is the time the cache's current snapshot was taken (its epoch, ms
 * since the Unix epoch on the broker's clock, distinct for each snapshot of that broker) and the count of change
 * events applied since. Two positions of one epoch compare by their counts. Positions of different epochs (a resync,
 * or another broker of the platform) cannot be compared: a replica that cannot judge a position leaves the read to
 * the broker.
 *
 * Written `<epoch>-<count>`, both decimal: in the broker's answer frames (`pos`), in replication frames, and in the
 * `X-Gateway-Position` header of the gateway's answers and of the cached reads that send one back.
 */

/** The header of a position: on the gateway's answers, and on the cached reads that send one back. */
export const POSITION_HEADER = 'X-Gateway-Position';

export interface Position {
  epoch: number;
  count: number;
}

/** Digits each part may have: a millisecond time and a count, well inside 2^53. */
const POSITION = /^(\d{1,15})-(\d{1,15})$/;

export function positionText(p: Position): string {
  return `${p.epoch}-${p.count}`;
}

/** A position from its text; null for anything else. */
export function parsePosition(text: string | null | undefined): Position | null {
  const m = typeof text === 'string' ? POSITION.exec(text) : null;
  return m ? { epoch: Number(m[1]), count: Number(m[2]) } : null;
}

/** Whether `at` is known to have reached `wanted`: the same epoch, at least as far on. */
export function reached(at: Position, wanted: Position): boolean {
  return at.epoch === wanted.epoch && at.count >= wanted.count;
}

/** The rule of a position's text, for refusals naming it. */
export const POSITION_RULE = 'must be a change-stream position as an answer gave it (<epoch>-<count>, digits)';
