/**
 * Binds a hand-written handler to its catalog entry, so the handler's arguments are the entry's typed inputs (the
 * zod output of its path, query and body) and the pairing is checked by the compiler rather than by a string.
 */
import type { Operation } from '../../../shared/catalog/index.js';
import type { Handler } from '../handler.js';

export type Binding = readonly [op: string, run: Handler];

export function bind<A>(entry: Operation<A>, run: Handler<A>): Binding {
  if (entry.answer?.kind !== 'custom')
    throw new Error(`${entry.id} declares a ${entry.answer?.kind ?? 'missing'} answer, not custom`);
  return [entry.op, run as Handler];
}
