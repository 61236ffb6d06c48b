/**
 * Every handler by operation name (`entry.op` of the catalog), in one map the link looks calls up in. An entry's
 * declared answer is interpreted generically; entries answered `custom` are bound by hand to a handler that receives
 * their typed arguments. The family prefix of a name says which platforms it may run on; family-agnostic names
 * (`Ping`, `ServerTime`) run on any. Every handler is guarded by what it needs the trading server to have declared at
 * login (`needs.ts`): an operation needing an undeclared command or event kind is refused before its handler runs.
 */
import { catalog, type Operation, type PasswordCheck } from '../../shared/catalog/index.js';
import type { Family } from '../../shared/protocol.js';
import { customHandlers } from './custom/index.js';
import type { Handler } from './handler.js';
import { interpret } from './interpreter.js';
import { customUseOf, declaredFirst, needsOf, useOf, type OperationNeeds } from './needs.js';

export interface RegisteredHandler {
  run: Handler;
  /** The family the operation belongs to, or null when it serves any platform. */
  family: Family | null;
  /** How it is answered: the entry's answer kind (`custom` for hand-written ones). */
  kind: string;
  /** The commands and event kinds the trading server's login must declare for the operation to run. */
  needs: OperationNeeds;
  /** The operation tests an account's password: the argument naming the account (see PasswordCheck). */
  passwordCheck?: PasswordCheck;
}

/** The family an operation's handler serves, from its name's prefix; null for the family-agnostic ones. */
export function familyOf(op: string): Family | null {
  if (op.startsWith('PF4.')) return 'PF4';
  if (op.startsWith('PF5.')) return 'PF5';
  return null;
}

function build(): Map<string, RegisteredHandler> {
  const out = new Map<string, RegisteredHandler>();
  for (const [op, run] of customHandlers) {
    const needs = needsOf(customUseOf(op));
    out.set(op, { run: declaredFirst(needs, run), family: familyOf(op), kind: 'custom', needs });
  }
  for (const entry of catalog) {
    if (entry.read === 'local' || out.has(entry.op)) continue;
    const run = interpret(entry);
    if (!run) continue;
    // The first entry of an op builds its handler, so its answer says what the handler needs.
    const needs = needsOf(useOf(entry));
    out.set(entry.op, { run: declaredFirst(needs, run), family: familyOf(entry.op), kind: entry.answer!.kind, needs });
  }
  // Every entry of an op must say the same about testing a password: the bound belongs to the handler they share.
  const checks = new Map<string, Operation>();
  for (const entry of catalog) {
    const registered = out.get(entry.op);
    if (!registered) continue;
    const first = checks.get(entry.op);
    if (first && first.passwordCheck?.login !== entry.passwordCheck?.login) {
      throw new Error(`${entry.id} and ${first.id} share handler ${entry.op} but not its passwordCheck`);
    }
    checks.set(entry.op, entry);
    if (entry.passwordCheck) registered.passwordCheck = entry.passwordCheck;
  }
  return out;
}

export const handlers: ReadonlyMap<string, RegisteredHandler> = build();
