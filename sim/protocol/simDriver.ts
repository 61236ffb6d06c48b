/**
 * The simulator's driver for the bridge kit (bridge/kit/driver.ts): what a simulated trading server says and does
 * behind the kit's manager sessions. The kit does the protocol; this maps it onto the server's world and faults:
 *
 * - capabilities: the change-event kinds each family pushes (EVENTS) and the world's registered commands plus the
 *   few the server answers itself (SESSION_COMMANDS: ServerTime, PF4 SrvRestart, which restarts the server shortly
 *   after its answer); the kit adds Ping;
 * - login: the server's manager table, its refuse-login fault, its rights (TradingServer.authenticate), journalled;
 * - rights: the world's rights table, checked before every command; a report window asked for without its right
 *   drops the connection (1008) instead of answering, as the platform does;
 * - the freeze and delay faults as the gate: a frozen server parks every request (up to MAX_PARKED_REQUESTS, beyond
 *   that they are lost, as a hung server loses them) and answers them in order when thawed; a delay holds an answer
 *   on a timer, and a freeze that began meanwhile parks it too. Events are held by the freeze through the kit's hold;
 * - coalescing: held ticks coalesce per symbol, and where some were dropped the world's summary (PF4 symbolInfo)
 *   follows, so what the dropped ticks moved is not lost;
 * - per-connection state (`SimSession`): the parked requests, and the state commands keep per manager connection
 *   (sync sessions, the daily-sync snapshot), gone with the connection;
 * - counters, through the kit's observer.
 */
import type { BridgeDriver, CommandHandler, Session, SessionLimits } from '../../bridge/kit/index.js';
import type { ChangeKind, Family } from '../../shared/protocol.js';
import type { TradingServer } from '../server/tradingServer.js';

/**
 * The change-event kinds each simulated family pushes: its snapshot's kinds and those pushed only live (PF4 news
 * bodies and mail, PF5 margin-call notifications). The kit sends no kind left out here.
 */
export const EVENTS: Record<Family, readonly ChangeKind[]> = {
  PF4: [
    'users',
    'trades',
    'ticks',
    'symbols',
    'groups',
    'margin',
    'online',
    'news',
    'newsBodies',
    'symbolGroups',
    'symbolSessions',
    'symbolInfo',
    'mail',
  ],
  PF5: ['users', 'positions', 'orders', 'deals', 'ticks', 'symbols', 'groups', 'margin'],
};

/** Commands the server answers itself rather than through its world's registry (the kit answers Ping). */
export const SESSION_COMMANDS: Record<Family, readonly string[]> = {
  PF4: ['ServerTime', 'SrvRestart'],
  PF5: ['ServerTime'],
};

/** Requests a frozen server holds per connection; more are lost. */
export const MAX_PARKED_REQUESTS = 10_000;

/**
 * The kit's limits the simulator sets (the kit's defaults for the rest): a frozen server answers nothing, so the
 * kit's bound of requests in flight stays above the parked ones, and the one past them reaches the freeze to be lost.
 */
export const SIM_LIMITS: Partial<SessionLimits> = { maxInFlight: MAX_PARKED_REQUESTS + 1 };
/** SrvRestart answers first and drops connections this much later. */
export const SRV_RESTART_GRACE_MS = 50;

/** One manager connection of a simulated server. */
export interface SimSession {
  readonly kit: Session<SimSession>;
  /** Requests a frozen server has taken and holds unanswered, each released by calling it. */
  parked: Array<{ cmd: string; answer: () => void }>;
  /** State a server keeps per manager connection (sync sessions, the daily-sync snapshot). */
  readonly commandState: Map<string, unknown>;
}

export function simDriver(server: TradingServer): BridgeDriver<SimSession> {
  const { world, faults, counters, family } = server;
  const registry = world.commands();

  const run =
    (cmd: string): CommandHandler<SimSession> =>
    (args, session) =>
      registry.run(cmd, args, {
        managerLogin: session.login as number,
        rights: session.rights,
        session: session.state.commandState,
      });
  const own: Record<string, CommandHandler<SimSession>> = {
    ServerTime: () => new Date().toISOString(),
    SrvRestart: () => {
      server.scheduleRestart(SRV_RESTART_GRACE_MS);
      return true;
    },
  };
  const commands: Record<string, CommandHandler<SimSession>> = {};
  for (const cmd of registry.names()) commands[cmd] = run(cmd);
  for (const cmd of SESSION_COMMANDS[family]) commands[cmd] = own[cmd];

  /** Holds a request until the thaw, or loses it past the bound. */
  const park = (session: Session<SimSession>, cmd: string): Promise<boolean> | false => {
    const { parked } = session.state;
    if (parked.length >= MAX_PARKED_REQUESTS) return false;
    return new Promise((resolve) => parked.push({ cmd, answer: () => resolve(true) }));
  };

  return {
    name: server.name,
    family,
    build: server.build,
    events: EVENTS[family],
    commands,
    log: server.log,

    authenticate: ({ login, password }) => server.authenticate(login, password),
    snapshot: () => world.snapshot(),
    subscribe: (emit) => server.subscribe(emit),
    coalesceKey: (kind, record) => (kind === 'ticks' ? (record as { symbol: string }).symbol : undefined),
    coalescedSummary: (symbol) => {
      const summary = world.coalescedTick?.(symbol);
      return summary && { kind: summary.kind, op: 'update', record: summary.record };
    },

    authorize: (cmd, args, session) => {
      const needed = registry.requiredRight(cmd, args);
      if (!needed || session.rights.has(needed.right)) return undefined;
      const message = `${cmd} needs the ${needed.right} right`;
      if (needed.drop) {
        // A report window asked for without the permission: the server drops the manager, it does not answer.
        server.log({
          msg: 'manager asked for a report without the right, dropping',
          server: server.name,
          login: session.login,
          cmd,
          right: needed.right,
        });
        counters.rightsDrops++;
      }
      return { message, drop: needed.drop };
    },

    gate: (request, session) => {
      const cmd = String(request.cmd);
      if (faults.frozen) return park(session, cmd);
      const delay = faults.delayFor(cmd);
      if (delay <= 0) return undefined;
      return new Promise<void>((resolve) => setTimeout(resolve, delay)).then(() =>
        faults.frozen ? park(session, cmd) : true,
      );
    },

    openSession: (kit) => {
      const session: SimSession = { kit, parked: [], commandState: new Map() };
      server.attach(session);
      return session;
    },
    closeSession: (kit) => {
      kit.state.parked = [];
      kit.state.commandState.clear();
      server.detach(kit.state);
    },
    available: () => !server.isDown(),

    observe: {
      loggedIn: (session) => {
        counters.logins++;
        world.journal?.(`manager ${session.login} logged in`, session.peer, 'Logins');
      },
      loginRefused: () => {
        counters.loginFailures++;
      },
      answered: (_cmd, failed) => {
        counters.commandsServed++;
        if (failed) counters.commandErrors++;
      },
      eventSent: () => {
        counters.eventsSent++;
      },
    },
  };
}
