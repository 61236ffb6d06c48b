/**
 * What a conformance rule is and what it runs with: its outcome (passed, failed, skipped, with a one-line detail
 * saying what was expected and what came), its time bound, and the suite's context (the options, the suite's own
 * logged-in session with its snapshot and cache, the connections a rule opens, the observer of every answer).
 */
import { randomBytes } from 'node:crypto';
import type { Family, LoginResult } from '../../shared/protocol.js';
import { Observer, ProbeConnection, show, type Answer } from './connection.js';
import type { Cache, SnapshotReading } from './snapshot.js';

export type RuleResultKind = 'passed' | 'failed' | 'skipped';

export interface ConformanceOptions {
  /** `ws://host:port/name` or `wss://…`. */
  server: string;
  login: number;
  password: string;
  /** The family the server must answer; when absent, the login's answer decides. */
  family?: Family;
  /** Make changes (a sandbox server only). */
  writes?: boolean;
  timeouts?: Partial<Timeouts>;
}

export interface Timeouts {
  /** Connecting, and any one answer. */
  answerMs: number;
  /** A Ping's answer (the broker's pingTimeoutMs). */
  pingMs: number;
  /** A whole snapshot, begin to end. */
  snapshotMs: number;
  /** How long an event a change promised is waited for after the answer to the Ping that follows it. */
  lateEventMs: number;
  /** How long a second answer to any of the concurrent requests is waited for, after a Ping's round trip. */
  graceMs: number;
  /** The step of the pause between repeated comparisons of caches that move with events: the n-th pause is n steps. */
  retryMs: number;
}

export const DEFAULT_TIMEOUTS: Timeouts = {
  answerMs: 10_000,
  pingMs: 5_000,
  snapshotMs: 120_000,
  lateEventMs: 1_000,
  graceMs: 200,
  retryMs: 100,
};

export interface Outcome {
  result: RuleResultKind;
  detail: string;
}

export const passed = (detail: string): Outcome => ({ result: 'passed', detail });
export const failed = (detail: string): Outcome => ({ result: 'failed', detail });
export const skipped = (detail: string): Outcome => ({ result: 'skipped', detail });

/** Thrown by a rule (or a helper it calls) to fail with `message` as the detail. */
export class RuleFailed extends Error {}

/** Thrown by a rule that cannot be judged because a rule it builds on was skipped: skipped with `message`. */
export class RuleSkipped extends Error {}

export interface Rule {
  /** Stable id: `<area>.<what>`, e.g. `login.wrong-password`. */
  id: string;
  /** One line. */
  name: string;
  /** Run only for these families (once the family is known). */
  families?: readonly Family[];
  /** Its time bound. */
  timeoutMs(t: Timeouts): number;
  /** Its outcome; a throw or a rejection fails it (a RuleSkipped skips it). */
  run(ctx: SuiteContext): Outcome | Promise<Outcome>;
}

/** The suite's own pumping session, logged in before the rules run. */
export interface MainSession {
  connection: ProbeConnection;
  login: LoginResult;
  /** The raw login answer (for the schema rule). */
  loginAnswer: Answer;
  /** When the Ping sent right after the login went out, and its answer (or the error waiting for it). */
  pingDuringSnapshot: { sentAt: number; answer?: Answer; error?: string };
  snapshot: SnapshotReading;
  cache: Cache;
}

export class SuiteContext {
  readonly observer = new Observer();
  readonly timeouts: Timeouts;
  main?: MainSession;
  /** Why the suite's own session is missing, when it is. */
  mainError?: string;
  /** The raw answer to the suite's login, even when it was not a valid login result. */
  mainLoginAnswer?: Answer;
  /** Shared state between rules (the writes' created records). */
  readonly state = new Map<string, unknown>();
  /** The wrong password the refusal rules send: random, drawn for the run (see `wrongPassword`). */
  readonly wrongPassword: string;
  /** Connections opened by the running rule, ended when it is done. */
  private ruleConnections: ProbeConnection[] = [];

  constructor(readonly options: ConformanceOptions) {
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
    this.wrongPassword = wrongPassword(options.password.length, options.password);
  }

  /** What no detail may show: the password and the wrong one the suite sends. */
  get secrets(): string[] {
    return [this.options.password, this.wrongPassword];
  }

  /** The family: the option, else the login's answer. */
  get family(): Family | undefined {
    return this.options.family ?? this.main?.login.family;
  }

  /** The main session, or a failure naming why there is none. */
  requireMain(): MainSession {
    if (!this.main)
      throw new RuleFailed(`needs the suite's own session, which did not come up: ${this.mainError ?? 'unknown'}`);
    return this.main;
  }

  requireFamily(): Family {
    const family = this.family;
    if (!family)
      throw new RuleFailed(`needs the family, unknown without --family when the login fails: ${this.mainError ?? ''}`);
    return family;
  }

  /** The commands the login declared. */
  get declared(): readonly string[] {
    return this.main?.login.capabilities.commands ?? [];
  }

  /** Opens a connection for the running rule (ended when the rule is done). */
  async open(): Promise<ProbeConnection> {
    const connection = await ProbeConnection.open(this.options.server, this.observer, this.timeouts.answerMs);
    this.ruleConnections.push(connection);
    return connection;
  }

  /** The login arguments of the configured manager, with `extra` over them. */
  loginArgs(extra: Record<string, unknown> = {}): Record<string, unknown> {
    return { login: this.options.login, password: this.options.password, ...extra };
  }

  /** Opens a connection and logs in with `pump` (default false); fails the rule when the login is refused. */
  async openLoggedIn(pump = false): Promise<{ connection: ProbeConnection; login: LoginResult; answerSeq: number }> {
    const connection = await this.open();
    const answer = await connection.request('login', this.loginArgs({ pump, versions: [1] }), this.timeouts.answerMs);
    if (answer.kind === 'error') throw new RuleFailed(`the login was refused: ${show(answer.error)}`);
    return { connection, login: answer.value as LoginResult, answerSeq: answer.frame.seq };
  }

  /** Takes the connections of the rule that ends. */
  takeRuleConnections(): ProbeConnection[] {
    const out = this.ruleConnections;
    this.ruleConnections = [];
    return out;
  }
}

/**
 * A wrong password for the refusal rules: random letters and digits, about as long as the real one (at least 12, at
 * most 64), never made from it, so that a server's log of failed logins holds nothing of the real password. It is
 * redacted from every detail as the password is. `password` only guards against drawing it (it is never read
 * otherwise).
 */
export function wrongPassword(length: number, password: string): string {
  const size = Math.min(64, Math.max(12, length));
  for (;;) {
    const drawn = randomBytes(size * 2)
      .toString('base64url')
      .replace(/[-_]/g, '')
      .slice(0, size);
    if (drawn.length === size && drawn !== password) return drawn;
  }
}
