/**
 * One simulated trading server inside the simulator process: its world, its manager sessions, its fault switches
 * and counters. Its manager sessions are the bridge kit's (`bridge`, driven by sim/protocol/simDriver.ts); the world's
 * changes go to the kit through the driver's subscription, which serialises each once for every pumping session.
 */
import type { Family } from '../../shared/protocol.js';
import { PF4_RESULT, PF5_RESULT } from '../../shared/resultCodes.js';
import { PF4ManagerRights, EnManagerRightsMembers } from '../../shared/records/contract.js';
import type { ManagerConfig, ServerConfig } from '../config/simConfig.js';
import { Faults } from '../control/faults.js';
import { processStats } from './processStats.js';
import { Pf4World } from '../pf4/pf4World.js';
import { Pf5World } from '../pf5/pf5World.js';
import { BridgedServer, type ChangeEmit } from '../../bridge/kit/index.js';
import { SIM_LIMITS, simDriver, type SimSession } from '../protocol/simDriver.js';
import type { ChangeOp, ChangeSink, SimWorld } from '../world/simWorld.js';
import type { EventKind } from '../../shared/protocol.js';

export type Logger = (entry: Record<string, unknown>) => void;

/** Build numbers reported at login, for whatever a broker wants to log. */
const BUILDS: Record<Family, number> = { PF4: 1420, PF5: 4755 };

const PF4_RIGHT_NAMES = Object.keys((PF4ManagerRights as unknown as { shape: Record<string, unknown> }).shape).filter(
  (k) => !['login', 'name', 'groups', 'mailBox', 'infoDepth', 'ipFilter', 'ipFrom', 'ipTo'].includes(k),
);

export interface ServerCounters {
  connections: number;
  connectionsTotal: number;
  logins: number;
  loginFailures: number;
  commandsServed: number;
  commandErrors: number;
  eventsSent: number;
  drops: number;
  restarts: number;
  /** Connections dropped because a report window was asked for without the right. */
  rightsDrops: number;
}

export type AuthOutcome =
  | { ok: true; manager: ManagerConfig; rights: string[] }
  | { ok: false; code: number; message: string };

export class TradingServer {
  readonly name: string;
  readonly family: Family;
  readonly world: SimWorld;
  readonly faults = new Faults();
  /** Every manager connection, logged in or not. */
  readonly sessions = new Set<SimSession>();
  readonly counters: ServerCounters = {
    connections: 0,
    connectionsTotal: 0,
    logins: 0,
    loginFailures: 0,
    commandsServed: 0,
    commandErrors: 0,
    eventsSent: 0,
    drops: 0,
    restarts: 0,
    rightsDrops: 0,
  };
  readonly build: number;
  /** The kit's side of this server: its manager sessions. */
  readonly bridge: BridgedServer<SimSession>;
  private downUntil = 0;
  private readonly restartTimers = new Set<NodeJS.Timeout>();
  /** Where the world's changes go: the kit's fan-out once it has subscribed. */
  private emit: ChangeEmit = () => {};

  constructor(
    readonly config: ServerConfig,
    seed: number,
    readonly log: Logger,
  ) {
    this.name = config.name;
    this.family = config.family;
    this.build = BUILDS[config.family];
    const sink: ChangeSink = (kind, op, record) => this.broadcast(kind, op, record);
    this.world = config.family === 'PF4' ? new Pf4World(config, seed, sink) : new Pf5World(config, seed, sink);
    this.bridge = new BridgedServer(simDriver(this), { limits: SIM_LIMITS });
    processStats();
  }

  start(): void {
    this.world.start();
  }

  stop(): void {
    this.world.stop();
    for (const timer of this.restartTimers) clearTimeout(timer);
    this.restartTimers.clear();
    this.bridge.stop();
  }

  /** Codes a login failure answers with, per family. */
  get codes() {
    return this.family === 'PF4'
      ? { badCredentials: PF4_RESULT.InvalidData, disabled: PF4_RESULT.AccountDisabled, refused: PF4_RESULT.NoConnect }
      : {
          badCredentials: PF5_RESULT.AuthAccountInvalid,
          disabled: PF5_RESULT.AuthAccountDisabled,
          refused: PF5_RESULT.AuthServerBusy,
        };
  }

  authenticate(login: number, password: string): AuthOutcome {
    if (this.faults.refuseLogin)
      return { ok: false, code: this.codes.refused, message: 'the server refuses manager logins' };
    const manager = this.config.managers.find((m) => m.login === login);
    // One message for both cases, so a caller cannot probe which manager logins exist.
    if (!manager || manager.password !== password) {
      return { ok: false, code: this.codes.badCredentials, message: 'invalid manager login or password' };
    }
    if (manager.disabled) return { ok: false, code: this.codes.disabled, message: `manager ${login} is disabled` };
    const all = this.family === 'PF4' ? PF4_RIGHT_NAMES : EnManagerRightsMembers;
    // A PF4 server's manager configuration (CfgUpdateManager) decides the rights of the next login.
    const configured = this.world.managerRights?.(login);
    return { ok: true, manager, rights: configured ?? (manager.rights === 'all' ? [...all] : manager.rights) };
  }

  isDown(now = Date.now()): boolean {
    return now < this.downUntil;
  }

  attach(session: SimSession): void {
    this.sessions.add(session);
    this.counters.connections = this.sessions.size;
    this.counters.connectionsTotal++;
  }

  detach(session: SimSession): void {
    this.sessions.delete(session);
    this.counters.connections = this.sessions.size;
  }

  /** A change of the world, for every pumping session. */
  broadcast(kind: Exclude<EventKind, 'resync'>, op: ChangeOp, record: unknown): void {
    this.emit(kind, op, record);
  }

  /** The driver's subscription: the kit's fan-out receives every change from now on. */
  subscribe(emit: ChangeEmit): () => void {
    this.emit = emit;
    return () => {
      this.emit = () => {};
    };
  }

  /** Closes every manager connection abruptly, as a network failure would. */
  drop(reason: string): void {
    this.counters.drops++;
    this.log({ msg: 'dropping manager connections', server: this.name, reason, sessions: this.sessions.size });
    this.bridge.drop();
  }

  /** Closes every connection and refuses new ones for `downMs`; the world carries on unchanged. */
  restart(downMs: number, reason: string): void {
    this.counters.restarts++;
    this.downUntil = Date.now() + downMs;
    this.log({ msg: 'server restarting', server: this.name, reason, downMs });
    this.bridge.restart('server restart');
    const timer = setTimeout(() => {
      this.restartTimers.delete(timer);
      this.log({ msg: 'server back up', server: this.name });
    }, downMs);
    timer.unref();
    this.restartTimers.add(timer);
  }

  /** Runs `restart` shortly after the current answer is on its way (SrvRestart answers true first). */
  scheduleRestart(delayMs: number): void {
    const timer = setTimeout(() => {
      this.restartTimers.delete(timer);
      this.restart(this.config.restartMs, 'SrvRestart');
    }, delayMs);
    timer.unref();
    this.restartTimers.add(timer);
  }

  /** A frozen server holds every change event and parks every request; thawed, it sends the held events, then
   * answers what it parked, in order (so the parked commands' events come after the held ones). */
  setFrozen(on: boolean): void {
    this.faults.frozen = on;
    if (on) return this.bridge.hold();
    this.bridge.release();
    for (const session of [...this.sessions]) {
      const parked = session.parked;
      session.parked = [];
      for (const { answer } of parked) answer();
    }
  }

  state(): Record<string, unknown> {
    return {
      server: this.name,
      family: this.family,
      up: !this.isDown(),
      ...this.counters,
      sessions: [...this.sessions].filter((s) => s.kit.login !== null).length,
      ...this.world.counts(),
      ticksEmitted: this.world.ticksEmitted(),
      ticksDropped: this.world.ticksDropped(),
      faults: this.faults.describe(),
      // The requests a freeze holds unanswered, by command.
      parked: [...this.sessions]
        .flatMap((s) => s.parked)
        .reduce<Record<string, number>>((n, { cmd }) => ({ ...n, [cmd]: (n[cmd] ?? 0) + 1 }), {}),
      /** The whole simulator process; the event-loop delay covers the time since the previous state read. */
      process: processStats(),
    };
  }
}
