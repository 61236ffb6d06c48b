/**
 * The one registry of a world's manager commands: each command name maps to its handler and to what the manager
 * needs to run it (a right, and whether a missing right drops the connection, as report windows do). The protocol
 * layer checks rights here before calling the handler, so handlers never check rights themselves.
 */
import type { CommandContext } from './simWorld.js';
import { CommandError } from './commandError.js';
import { ArgReader } from './args.js';

/** A right name, or a function of the arguments when the right depends on them (a balance entry needs `money`). */
export type RightRule = string | ((args: Record<string, unknown>) => string | undefined);

export interface CommandNeeds {
  right?: RightRule;
  /** Without the right the server drops the connection instead of answering (report windows). */
  dropWithoutRight?: boolean;
}

export type Handler = (args: ArgReader, ctx: CommandContext, raw: Record<string, unknown>) => unknown;

interface Entry {
  handler: Handler;
  needs: CommandNeeds;
}

export class CommandRegistry {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly badCode: number,
    private readonly rightsTable: Readonly<Record<string, CommandNeeds>> = {},
  ) {}

  on(cmd: string, handler: Handler): this {
    if (this.entries.has(cmd)) throw new Error(`command ${cmd} registered twice`);
    this.entries.set(cmd, { handler, needs: this.rightsTable[cmd] ?? {} });
    return this;
  }

  has(cmd: string): boolean {
    return this.entries.has(cmd);
  }

  names(): string[] {
    return [...this.entries.keys()];
  }

  /** The right `cmd` needs with these arguments, if any. */
  requiredRight(cmd: string, args: Record<string, unknown>): { right: string; drop: boolean } | undefined {
    const needs = this.entries.get(cmd)?.needs ?? this.rightsTable[cmd];
    if (!needs?.right) return undefined;
    const right = typeof needs.right === 'function' ? needs.right(args) : needs.right;
    return right === undefined ? undefined : { right, drop: needs.dropWithoutRight === true };
  }

  run(cmd: string, raw: Record<string, unknown>, ctx: CommandContext): unknown {
    const entry = this.entries.get(cmd);
    if (!entry) throw new CommandError(this.badCode, `unknown command ${cmd}`);
    return entry.handler(new ArgReader(raw, this.badCode), ctx, raw);
  }
}
