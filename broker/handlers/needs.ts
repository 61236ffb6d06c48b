/**
 * What each operation's handler asks of the trading server: the manager commands it may send and the cache tables it
 * may read, from the entry's declared answer (the interpreter's) or the hand-written handlers' list
 * (`custom/commands.ts`). The registry guards every handler with it (`declaredFirst`): an operation needing a command
 * the trading server's login did not declare, or a table filled by an event kind it did not declare, is refused
 * before its handler runs, so a handler that sends several commands never sends the first and then fails on a later
 * one. The refusal names everything missing (`ManagerSession.undeclared`). docs/manager-protocol.md's operations
 * tables are generated from the same uses (`scripts/gen-protocol-docs.ts`).
 */
import type { Answer } from '../../shared/catalog/answer.js';
import type { Operation } from '../../shared/catalog/operation.js';
import { OperationError } from '../../shared/errors.js';
import type { ChangeKind } from '../../shared/protocol.js';
import { eventKindOf } from '../cache/pumpCache.js';
import { CUSTOM_HANDLER_COMMANDS } from './custom/commands.js';
import { customHandlers } from './custom/index.js';
import { CACHE_CLOSED, type Handler } from './handler.js';

/** What one handler uses: its answer kind, the commands it may send in order, the tables it reads, a note for docs. */
export interface OperationUse {
  kind: string;
  commands: readonly string[];
  cache: readonly string[];
  /** When a command is sent only sometimes, or more than once: one short sentence. */
  note?: string;
}

/** What a call of the operation needs the trading server to have declared at login. */
export interface OperationNeeds {
  commands: readonly string[];
  events: readonly ChangeKind[];
}

/** The use of a hand-written handler, as `custom/commands.ts` lists it. */
export function customUseOf(op: string): OperationUse {
  const listed = CUSTOM_HANDLER_COMMANDS[op];
  if (!listed)
    throw new Error(`${op} has a hand-written handler: list what it sends in broker/handlers/custom/commands.ts`);
  return { kind: 'custom', commands: listed.commands ?? [], cache: listed.cache ?? [], note: listed.note };
}

/** What the handler of `entry` uses: its declared answer's commands and tables, or the hand-written handler's list. */
export function useOf(entry: Operation): OperationUse {
  const answer = entry.answer as Answer<unknown> | undefined;
  if (customHandlers.has(entry.op) || answer?.kind === 'custom') return customUseOf(entry.op);
  if (!answer) throw new Error(`${entry.id} reaches the broker without an answer`);
  switch (answer.kind) {
    case 'live':
    case 'livePage':
      return { kind: answer.kind, commands: [answer.command], cache: [] };
    case 'replace':
      return { kind: answer.kind, commands: [answer.read.command, answer.write.command], cache: [] };
    case 'patch': {
      if (answer.native) return { kind: answer.kind, commands: [answer.native.command], cache: [] };
      return { kind: answer.kind, commands: [answer.read!.command, answer.write!.command], cache: [] };
    }
    case 'cachedRecord':
      return { kind: answer.kind, commands: [], cache: [answer.table, ...(answer.orIn ?? [])] };
    case 'cachedList':
      return { kind: answer.kind, commands: [], cache: [answer.table] };
  }
}

/** The commands and event kinds a use needs declared, each once. */
export function needsOf(use: OperationUse): OperationNeeds {
  return { commands: [...new Set(use.commands)], events: [...new Set(use.cache.map(eventKindOf))] };
}

/**
 * `run` refused up front when the trading server's latest accepted login did not declare all of `needs`. Before any
 * login declared anything (a session never up yet), an operation that sends commands logs in first, within the call's
 * deadline, as its first command would; one answered from the cache waits for the cache's first snapshot, as its
 * read would, and is checked then.
 */
export function declaredFirst(needs: OperationNeeds, run: Handler): Handler {
  if (needs.commands.length === 0 && needs.events.length === 0) return run;
  return (ctx) => {
    const session = ctx.platform.session;
    const checked = () => {
      const refusal = session.undeclared(needs.commands, needs.events);
      if (refusal) throw refusal;
      return run(ctx);
    };
    if (session.declared) return checked();
    if (needs.commands.length) {
      const sendBy = typeof ctx.deadline === 'number' ? ctx.deadline : ctx.deadline.sendBy;
      return session.whenLoggedIn(sendBy).then(checked);
    }
    const cache = ctx.platform.cache;
    // A cache that holds a snapshot answers as it does while its session is down (from before the drop).
    if (cache.ready) return run(ctx);
    return cache.whenReady().then(() => {
      if (!cache.ready) throw new OperationError('NoConnect', CACHE_CLOSED);
      return checked();
    });
  };
}
