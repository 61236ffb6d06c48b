/**
 * Every handler by operation name (`entry.op` of the catalog), in one map the link looks calls up in. The family
 * prefix of a name says which platforms it may run on; family-agnostic names (`Ping`) run on any.
 */
import type { Family } from '../../shared/protocol.js';
import { commonHandlers } from './common.js';
import type { Handler } from './handler.js';
import { pf4Handlers } from './pf4.js';
import { pf5Handlers } from './pf5.js';

export interface RegisteredHandler {
  run: Handler;
  /** The family the operation belongs to, or null when it serves any platform. */
  family: Family | null;
}

function familyOf(op: string): Family | null {
  if (op.startsWith('PF4.')) return 'PF4';
  if (op.startsWith('PF5.')) return 'PF5';
  return null;
}

export const handlers: ReadonlyMap<string, RegisteredHandler> = new Map(
  Object.entries({ ...commonHandlers, ...pf4Handlers, ...pf5Handlers }).map(([op, run]) => [op, { run, family: familyOf(op) }]),
);
