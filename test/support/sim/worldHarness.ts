/**
 * Runs a simulated world without sockets, for tests of the simulator's behaviour: commands are called the way a
 * manager session calls them (rights checked through the same registry), and every change event is recorded.
 */
import { parseConfig, type ServerConfig } from '../../../sim/config/simConfig.js';
import { Pf4World } from '../../../sim/pf4/pf4World.js';
import { Pf5World } from '../../../sim/pf5/pf5World.js';
import { CommandError } from '../../../sim/world/commandError.js';
import type { ChangeOp } from '../../../sim/world/simWorld.js';
import type { EventKind, Family } from '../../../shared/protocol.js';

export interface RecordedEvent {
  kind: Exclude<EventKind, 'resync'>;
  op: ChangeOp;
  record: any;
}

export interface Harness<W> {
  world: W;
  events: RecordedEvent[];
  /** Runs a command as a manager with `rights` (default: every right the command could need). */
  call<T = any>(cmd: string, args?: Record<string, unknown>, rights?: string[]): T;
  /** Runs a command that must fail; answers its code and message. */
  fails(cmd: string, args?: Record<string, unknown>, rights?: string[]): { code: number; message: string };
}

function serverConfig(family: Family, overrides: Record<string, unknown>): ServerConfig {
  return parseConfig({
    servers: [
      {
        name: 'test',
        family,
        accounts: 20,
        trades: 0,
        symbols: 12,
        ticksPerSecond: 0,
        managers: [{ login: 1000, password: 'pw' }],
        ...overrides,
      },
    ],
  }).servers[0];
}

function harness<W extends Pf4World | Pf5World>(
  make: (sink: (k: any, o: ChangeOp, r: unknown) => void) => W,
): Harness<W> {
  const events: RecordedEvent[] = [];
  const world = make((kind, op, record) => events.push({ kind, op, record }));
  const session = new Map<string, unknown>();
  const run = (cmd: string, args: Record<string, unknown>, rights?: string[]) => {
    const registry = world.commands();
    const needed = registry.requiredRight(cmd, args);
    if (needed && rights && !rights.includes(needed.right)) {
      throw new CommandError(
        world.family === 'PF4' ? 7 : 8,
        needed.drop ? 'DROPPED' : `${cmd} needs the ${needed.right} right`,
      );
    }
    return registry.run(cmd, args, { managerLogin: 1000, rights: new Set(rights ?? []), session });
  };
  return {
    world,
    events,
    call: (cmd, args = {}, rights) => run(cmd, args, rights) as any,
    fails: (cmd, args = {}, rights) => {
      try {
        run(cmd, args, rights);
      } catch (err) {
        if (err instanceof CommandError) return { code: err.code, message: err.message };
        throw err;
      }
      throw new Error(`${cmd} unexpectedly succeeded`);
    },
  };
}

export function pf4Harness(overrides: Record<string, unknown> = {}, seed = 1): Harness<Pf4World> {
  return harness((sink) => new Pf4World(serverConfig('PF4', overrides), seed, sink));
}

export function pf5Harness(overrides: Record<string, unknown> = {}, seed = 1): Harness<Pf5World> {
  return harness((sink) => new Pf5World(serverConfig('PF5', overrides), seed, sink));
}
