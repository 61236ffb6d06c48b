/**
 * The deliberately broken trading servers the conformance suite is run against, to show it able to fail: each is
 * the correct base of its family (pf4.ts, pf5.ts) with one promise of docs/manager-protocol.md broken, in its driver
 * where a driver can break it, else on the wire (wire.ts), and names the rule ids the suite must fail against it:
 * exactly those, every other rule passing or skipped. The correct bases are listed first, failing nothing.
 *
 * A break that leaves the suite's cache wrong is seen by every rule that compares that cache (a group of rules); the
 * `fails` of each says which and `breaks` says why. docs/conformance.md ("How the suite is shown able to fail")
 * tables them; bridge/conformance/broken.test.ts runs them.
 *
 * Invariant: server names are unique (each is its path on the one listener).
 */
import {
  BridgedServer,
  ResultError,
  type BridgeDriver,
  type CommandHandler,
  type SnapshotPart,
} from '../../kit/index.js';
import { canonicalInt } from '../../../shared/int64.js';
import { stringifyJson } from '../../../shared/losslessJson.js';
import { loginArgsSchema, type Family } from '../../../shared/protocol.js';
import { PF4_RESULT } from '../../../shared/resultCodes.js';
import type { Timeouts } from '../context.js';
import { PF4_MANAGER, pf4Driver, pf4World } from './pf4.js';
import { PF5_MANAGER, pf5Driver, pf5World } from './pf5.js';
import { objectOf, parsed, RequestLog, TappedServer, type Wire, type WireTap } from './wire.js';
import type { Row, TinyWorld } from './world.js';

export interface Built {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each broken server keeps session state of its own type
  server: BridgedServer<any>;
  world: TinyWorld;
}

export interface BrokenServer {
  /** Its path on the listener. */
  name: string;
  family: Family;
  /** What it does wrong (or "nothing" for a correct base), in a sentence. */
  breaks: string;
  /** The rule ids the suite fails against it: exactly these. */
  fails: readonly string[];
  /** Whether the suite runs with --writes against it. */
  writes: boolean;
  /** Time bounds of its run, over the test's own. */
  timeouts?: Partial<Timeouts>;
  build(name: string): Built;
}

export const MANAGERS: Record<Family, { login: number; password: string }> = { PF4: PF4_MANAGER, PF5: PF5_MANAGER };

/** How long the slow-Ping server holds each Ping of a logged-in session, and the ping bound its run is given. */
export const SLOW_PING_MS = 300;
export const SLOW_PING_BOUND_MS = 150;

/**
 * The answer bound of the runs whose break leaves an answer or a close the suite waits for never coming, so that the
 * suite gives up on it sooner: every answer that does come is written at once by the in-process server, and two
 * seconds leave room for a loaded machine (the near-limit frame's bound is three of them).
 */
export const NEVER_COMES_ANSWER_MS = 2000;

/** Frames past this many bytes are refused by the server that reads too little. */
const SMALL_FRAME_BYTES = 1024 * 1024;
const UINT32_MAX = 4_294_967_295;

type DriverChange = (driver: BridgeDriver, world: TinyWorld) => BridgeDriver;

function base(family: Family, name: string): { driver: BridgeDriver; world: TinyWorld } {
  const world = family === 'PF4' ? pf4World() : pf5World();
  return { world, driver: family === 'PF4' ? pf4Driver(world, name) : pf5Driver(world, name) };
}

/** The family's base with its driver changed by `change`. */
const onDriver =
  (family: Family, change: DriverChange = (d) => d) =>
  (name: string): Built => {
    const { driver, world } = base(family, name);
    return { world, server: new BridgedServer(change(driver, world)) };
  };

/** The family's base behind a tap of its own per connection (and its driver changed by `change`). */
const onWire =
  (family: Family, tap: () => WireTap, change: DriverChange = (d) => d) =>
  (name: string): Built => {
    const { driver, world } = base(family, name);
    return { world, server: new TappedServer(change(driver, world), tap) };
  };

const withCommands = (driver: BridgeDriver, commands: Record<string, CommandHandler>): BridgeDriver => ({
  ...driver,
  commands: { ...driver.commands, ...commands },
});

/** Every handler's refusal answered with `code(refusal)` instead of its own. */
function recoded(driver: BridgeDriver, code: (refusal: ResultError) => number): BridgeDriver {
  const commands: Record<string, CommandHandler> = {};
  for (const [cmd, handler] of Object.entries(driver.commands)) {
    commands[cmd] = (args, session) => {
      try {
        return handler(args, session);
      } catch (error) {
        if (error instanceof ResultError) throw new ResultError(code(error), error.message);
        throw error;
      }
    };
  }
  return { ...driver, commands };
}

/**
 * A tap that edits the answers the kit writes: `edit` gets each answer (parsed, `id` first), the command it answers
 * and the connection's log, and answers the frames to send instead, or undefined to send it as it is. `onRequest`
 * may answer a request itself (null keeps it from the kit) or replace it.
 */
function answerTap(
  edit: (
    answer: Record<string, unknown>,
    cmd: string | undefined,
    log: RequestLog,
  ) => Array<Record<string, unknown>> | undefined,
  onRequest?: (
    request: Record<string, unknown>,
    wire: Wire,
    log: RequestLog,
  ) => Record<string, unknown> | null | undefined,
): () => WireTap {
  return () => {
    const log = new RequestLog();
    return {
      fromManager(frame, wire) {
        log.saw(frame);
        const request = objectOf(frame.value);
        if (!request || !onRequest) return undefined;
        const out = onRequest(request, wire, log);
        return out === undefined ? undefined : out === null ? null : { text: stringifyJson(out), isBinary: false };
      },
      toManager(text) {
        const frame = parsed(text);
        const cmd = log.answered(frame);
        if (!('id' in frame) || !('result' in frame || 'error' in frame)) return [text];
        return edit(frame, cmd, log)?.map((f) => stringifyJson(f)) ?? [text];
      },
    };
  };
}

/** A tap that edits the snapshot's frames: `edit` gets each resync frame and answers the frames to send instead. */
function snapshotTap(newEdit: () => (event: { op: string; record: Row }, text: string) => string[]): () => WireTap {
  return () => {
    const edit = newEdit();
    return {
      toManager(text) {
        const frame = parsed(text);
        if (frame.event !== 'resync') return [text];
        return edit({ op: String(frame.op), record: objectOf(frame.record) ?? {} }, text);
      },
    };
  };
}

const resync = (op: string, record: Row) => stringifyJson({ event: 'resync', op, record });

/** The login's result edited by `edit` (a copy). */
const loginEdited = (edit: (result: Row) => void) =>
  answerTap((answer, cmd) => {
    if (cmd !== 'login' || !('result' in answer)) return undefined;
    const result = structuredClone(objectOf(answer.result) ?? {});
    edit(result);
    return [{ id: answer.id, result }];
  });

const withoutCommand = (command: string) =>
  loginEdited((result) => {
    const capabilities = objectOf(result.capabilities) ?? {};
    capabilities.commands = (capabilities.commands as string[]).filter((c) => c !== command);
  });

const refusedAsUnknown =
  (command: string): CommandHandler =>
  () => {
    throw new ResultError(PF4_RESULT.InvalidData, `unknown command ${command}`);
  };

export const BROKEN_SERVERS: readonly BrokenServer[] = [
  {
    name: 'correct-pf4',
    family: 'PF4',
    writes: true,
    fails: [],
    breaks: 'nothing: the PF4 base (accounts and groups, their reads and writes, a restart)',
    build: onDriver('PF4'),
  },
  {
    name: 'correct-pf4-tapped',
    family: 'PF4',
    writes: true,
    fails: [],
    breaks: 'nothing: the PF4 base behind a tap that passes every frame as it is (the wire breaks below use such taps)',
    build: onWire('PF4', () => ({})),
  },
  {
    name: 'correct-pf5',
    family: 'PF5',
    writes: true,
    fails: [],
    breaks: 'nothing: the PF5 base (accounts with logins beyond 2^53 − 1, groups, their reads and writes)',
    build: onDriver('PF5'),
  },

  // Login
  {
    name: 'login-any-password',
    family: 'PF4',
    writes: true,
    fails: ['login.wrong-password'],
    breaks: 'a known manager login is let in whatever the password',
    build: onDriver('PF4', (d, world) => ({
      ...d,
      authenticate: ({ login }) => world.authenticate(login, world.managers.get(login)?.password ?? ''),
    })),
  },
  {
    name: 'login-answers-before-login',
    family: 'PF4',
    writes: true,
    fails: ['login.before-login'],
    breaks: 'ServerTime is answered before the login',
    build: onWire(
      'PF4',
      answerTap(
        () => undefined,
        (request, wire, log) => {
          if (log.loggedIn || request.cmd !== 'ServerTime' || typeof request.id !== 'number') return undefined;
          wire.send(stringifyJson({ id: request.id, result: new Date().toISOString() }));
          return null;
        },
      ),
    ),
  },
  {
    name: 'login-version-2',
    family: 'PF4',
    writes: true,
    fails: ['login.version-1', 'login.version-absent'],
    breaks: 'the login answers version 2 whatever was offered',
    build: onWire(
      'PF4',
      loginEdited((result) => {
        result.version = 2;
      }),
    ),
  },
  {
    name: 'login-offer-ignored',
    family: 'PF4',
    writes: true,
    fails: ['login.unknown-version'],
    breaks: 'the versions offered are ignored: a login offering only [999] is let in, version 1',
    build: onWire(
      'PF4',
      answerTap(
        () => undefined,
        (request) => {
          const args = objectOf(request.args);
          if (request.cmd !== 'login' || !args || !('versions' in args)) return undefined;
          const { versions: _ignored, ...rest } = args;
          return { ...request, args: rest };
        },
      ),
    ),
  },
  {
    name: 'login-other-family',
    family: 'PF4',
    writes: true,
    fails: ['login.family'],
    breaks: 'a PF4 server whose login (and snapshot begin) names the family PF5; the suite is told --family PF4',
    build: (name) => {
      const family = loginEdited((result) => {
        result.family = 'PF5';
      });
      return onWire('PF4', () => {
        const login = family();
        return {
          fromManager: login.fromManager,
          toManager(text, wire) {
            const frame = parsed(text);
            if (frame.event === 'resync' && frame.op === 'begin')
              return [resync('begin', { ...objectOf(frame.record), family: 'PF5' })];
            return login.toManager!(text, wire);
          },
        };
      })(name);
    },
  },
  {
    name: 'login-result-without-build',
    family: 'PF4',
    writes: true,
    fails: ['login.result-schema'],
    breaks: 'the login answer lacks its build',
    build: onWire(
      'PF4',
      loginEdited((result) => {
        delete result.build;
      }),
    ),
  },
  {
    name: 'login-malformed-unnamed',
    family: 'PF4',
    writes: true,
    fails: ['login.malformed'],
    breaks: 'a malformed login is refused with the right code but a message naming no field',
    build: onWire(
      'PF4',
      answerTap(
        () => undefined,
        (request, wire) => {
          if (request.cmd !== 'login' || loginArgsSchema.safeParse(request.args ?? {}).success) return undefined;
          wire.send(
            stringifyJson({ id: request.id, error: { code: PF4_RESULT.InvalidData, message: 'bad arguments' } }),
          );
          return null;
        },
      ),
    ),
  },
  {
    name: 'login-second-login-accepted',
    family: 'PF4',
    writes: true,
    fails: ['login.second-login'],
    breaks: "a second login on a logged-in session is answered with the first one's result",
    build: onWire(
      'PF4',
      answerTap(
        () => undefined,
        (request, wire, log) => {
          if (request.cmd !== 'login' || !log.loggedIn) return undefined;
          wire.send(stringifyJson({ id: request.id, result: log.loginResult }));
          return null;
        },
      ),
    ),
  },

  // Keep-alive
  {
    name: 'ping-time-not-iso',
    family: 'PF4',
    writes: true,
    fails: ['ping.answer', 'ping.during-snapshot'],
    breaks: 'Ping answers {time} as milliseconds since the epoch, not an ISO date-time',
    build: onWire(
      'PF4',
      answerTap((answer, cmd) =>
        cmd === 'Ping' && 'result' in answer ? [{ id: answer.id, result: { time: Date.now() } }] : undefined,
      ),
    ),
  },
  {
    name: 'ping-slow',
    family: 'PF4',
    writes: false,
    fails: ['ping.answer', 'ping.during-snapshot'],
    timeouts: { pingMs: SLOW_PING_BOUND_MS },
    breaks: `Ping is answered ${SLOW_PING_MS} ms late, past the ping bound (${SLOW_PING_BOUND_MS} ms in this run)`,
    build: onDriver('PF4', (d) => ({
      ...d,
      gate: (request, session) =>
        request.cmd === 'Ping' && session.login !== null
          ? new Promise<void>((resolve) => setTimeout(resolve, SLOW_PING_MS))
          : undefined,
    })),
  },
  {
    name: 'server-time-epoch',
    family: 'PF4',
    writes: true,
    fails: ['ping.server-time'],
    breaks: 'ServerTime answers milliseconds since the epoch',
    build: onDriver('PF4', (d) => withCommands(d, { ServerTime: () => Date.now() })),
  },

  // Capabilities
  {
    name: 'capability-read-unknown',
    family: 'PF4',
    writes: true,
    fails: ['capabilities.read-probes'],
    breaks: 'UserPasswordCheck is declared but answered "unknown command"',
    build: onDriver('PF4', (d) => withCommands(d, { UserPasswordCheck: refusedAsUnknown('UserPasswordCheck') })),
  },
  {
    name: 'capability-write-unknown',
    family: 'PF4',
    writes: true,
    fails: ['capabilities.write-probes'],
    breaks: 'UserPasswordSet is declared but answered "unknown command"',
    build: onDriver('PF4', (d) => withCommands(d, { UserPasswordSet: refusedAsUnknown('UserPasswordSet') })),
  },
  {
    name: 'capability-read-undeclared',
    family: 'PF4',
    writes: true,
    fails: ['capabilities.undeclared-reads'],
    breaks: "GroupRecordRequest is answered but left out of the login's commands",
    build: onWire('PF4', withoutCommand('GroupRecordRequest')),
  },
  {
    name: 'capability-ping-undeclared',
    family: 'PF4',
    writes: true,
    fails: ['capabilities.ping-declared', 'capabilities.undeclared-reads'],
    breaks: "Ping is answered but left out of the login's commands (so it is also an undeclared read that answers)",
    build: onWire('PF4', withoutCommand('Ping')),
  },
  {
    name: 'capability-unknown-succeeds',
    family: 'PF4',
    writes: true,
    fails: ['capabilities.undeclared-reads', 'capabilities.unknown-command'],
    breaks:
      'a command outside the login\'s list is answered with a null result instead of "unknown command" (made-up and undeclared alike)',
    build: onWire(
      'PF4',
      answerTap(
        () => undefined,
        (request, wire, log) => {
          const declared = objectOf(log.loginResult?.capabilities)?.commands as string[] | undefined;
          if (!declared || typeof request.cmd !== 'string' || request.cmd === 'login' || declared.includes(request.cmd))
            return undefined;
          wire.send(stringifyJson({ id: request.id, result: null }));
          return null;
        },
      ),
    ),
  },

  // The snapshot
  {
    name: 'snapshot-begin-elsewhere',
    family: 'PF4',
    writes: true,
    fails: ['snapshot.order'],
    breaks: "the snapshot's begin names another server than the login",
    build: onWire(
      'PF4',
      snapshotTap(
        () =>
          ({ op, record }, text) =>
            op === 'begin' ? [resync('begin', { ...record, server: `${String(record.server)}-elsewhere` })] : [text],
      ),
    ),
  },
  {
    name: 'snapshot-kinds-reordered',
    family: 'PF4',
    writes: true,
    fails: ['snapshot.kinds'],
    breaks: 'the users chunk is sent after the groups chunk',
    build: onWire(
      'PF4',
      snapshotTap(() => {
        let users: string[] = [];
        return ({ op, record }, text) => {
          if (op === 'chunk' && record.kind === 'users') {
            users.push(text);
            return [];
          }
          const out = op === 'end' ? [...users, text] : [text, ...users];
          users = [];
          return out;
        };
      }),
    ),
  },
  {
    name: 'snapshot-undeclared-kind',
    family: 'PF4',
    writes: true,
    fails: ['snapshot.kinds'],
    breaks: 'the snapshot carries an online chunk, a kind the login does not declare (end.counts agreeing)',
    build: onWire(
      'PF4',
      snapshotTap(() => ({ op, record }, text) => {
        if (op !== 'end') return [text];
        const online = [{ login: 1001, group: 'demo', ip: '203.0.113.7' }];
        return [
          resync('chunk', { kind: 'online', items: online }),
          resync('end', { counts: { ...objectOf(record.counts), online: online.length } }),
        ];
      }),
    ),
  },
  {
    name: 'snapshot-counts-off',
    family: 'PF4',
    writes: true,
    fails: ['snapshot.counts', 'reconnect.fresh-snapshot', 'writes.restart'],
    breaks:
      "end.counts says one account more than the chunks carry (in every snapshot: the reconnect's and the restart's too)",
    build: onWire(
      'PF4',
      snapshotTap(() => ({ op, record }, text) => {
        if (op !== 'end') return [text];
        const counts = objectOf(record.counts) ?? {};
        return [resync('end', { counts: { ...counts, users: Number(counts.users) + 1 } })];
      }),
    ),
  },
  {
    name: 'snapshot-key-twice',
    family: 'PF4',
    writes: true,
    fails: ['snapshot.keys'],
    breaks: 'the first account is sent twice in the users chunk (end.counts counting it twice)',
    build: onWire(
      'PF4',
      snapshotTap(() => {
        let extra = 0;
        return ({ op, record }, text) => {
          if (op === 'chunk' && record.kind === 'users' && extra === 0) {
            const items = record.items as unknown[];
            extra = 1;
            return [resync('chunk', { kind: 'users', items: [...items, items[0]] })];
          }
          if (op !== 'end') return [text];
          const counts = objectOf(record.counts) ?? {};
          return [resync('end', { counts: { ...counts, users: Number(counts.users) + extra } })];
        };
      }),
    ),
  },
  {
    name: 'snapshot-field-missing',
    family: 'PF4',
    writes: true,
    fails: ['snapshot.matches-live', 'reconnect.fresh-snapshot', 'writes.cache-matches-live'],
    breaks:
      "the snapshot's accounts lack leverage, which live reads and events carry (a cache stays wrong for every account no change rewrites: the suite's own, and a reconnected session's against the suite's)",
    build: onDriver('PF4', (d) => ({
      ...d,
      snapshot: (session) =>
        (d.snapshot(session) as SnapshotPart[]).map((part) =>
          part.kind !== 'users'
            ? part
            : {
                ...part,
                toWire: (row: Row) => {
                  const { leverage: _left, ...rest } = row;
                  return rest;
                },
              },
        ),
    })),
  },
  {
    name: 'snapshot-events-before-end',
    family: 'PF4',
    writes: true,
    fails: ['snapshot.matches-live', 'reconnect.fresh-snapshot'],
    breaks:
      'the events of changes made during the snapshot are sent after begin, before the chunks, whose older rows then overwrite them in the cache (the session count a pumping login makes, until a later one rewrites it)',
    build: onWire('PF4', eventsBeforeChunks),
  },
  {
    name: 'reconnect-stale-snapshot',
    family: 'PF4',
    writes: true,
    fails: ['reconnect.fresh-snapshot'],
    breaks: 'the snapshot of the first pumping login is served again to every later one',
    build: onDriver('PF4', (d) => {
      let first: ReturnType<BridgeDriver['snapshot']> | undefined;
      return { ...d, snapshot: (session) => (first ??= d.snapshot(session)) };
    }),
  },
  {
    name: 'reconnect-stale-snapshot-writes-only',
    family: 'PF4',
    writes: true,
    fails: ['reconnect.fresh-snapshot'],
    breaks:
      'the snapshot of the first pumping login is served again to every later one, in a still world (no login stamps, no session counts: only writes change records)',
    build: onDriver('PF4', (d, world) => {
      world.still();
      let first: ReturnType<BridgeDriver['snapshot']> | undefined;
      return { ...d, snapshot: (session) => (first ??= d.snapshot(session)) };
    }),
  },

  // Answers
  {
    name: 'answers-id-not-first',
    family: 'PF4',
    writes: true,
    fails: ['answers.id-first'],
    breaks: 'every answer is written with result (or error) before id',
    build: onWire(
      'PF4',
      answerTap((answer) => {
        const { id, ...rest } = answer;
        return [{ ...rest, id }];
      }),
    ),
  },
  {
    name: 'answers-twice',
    family: 'PF4',
    writes: true,
    fails: ['answers.one-per-request'],
    breaks: 'UserPasswordCheck is answered twice',
    build: onWire(
      'PF4',
      answerTap((answer, cmd) => (cmd === 'UserPasswordCheck' ? [answer, answer] : undefined)),
    ),
  },
  {
    name: 'answers-wrong-id',
    family: 'PF4',
    writes: true,
    fails: ['capabilities.read-probes', 'answers.one-per-request'],
    timeouts: { answerMs: NEVER_COMES_ANSWER_MS },
    breaks: "UserPasswordCheck is answered with another id than its request's (so its probe also goes unanswered)",
    build: onWire(
      'PF4',
      answerTap((answer, cmd) =>
        cmd === 'UserPasswordCheck' ? [{ ...answer, id: Number(answer.id) + 1_000_000 }] : undefined,
      ),
    ),
  },
  {
    name: 'answers-ids-32-bit',
    family: 'PF4',
    writes: true,
    fails: ['answers.concurrent', 'answers.one-per-request'],
    timeouts: { answerMs: NEVER_COMES_ANSWER_MS },
    breaks: 'request ids are kept in 32 bits: an id past 2^32 − 1 is answered with its low 32 bits',
    build: onWire(
      'PF4',
      answerTap((answer) =>
        typeof answer.id === 'number' && answer.id > UINT32_MAX
          ? [{ ...answer, id: Number(BigInt.asUintN(32, BigInt(answer.id))) }]
          : undefined,
      ),
    ),
  },
  {
    name: 'errors-code-as-text',
    family: 'PF4',
    writes: true,
    fails: ['answers.error-shape'],
    breaks: 'the driver\'s refusals carry their code as a string ("3")',
    // A bridge in plain JavaScript can do this; the kit's types cannot, hence the cast.
    build: onDriver('PF4', (d) => recoded(d, (refusal) => String(refusal.code) as unknown as number)),
  },
  {
    name: 'errors-code-not-in-table',
    family: 'PF4',
    writes: true,
    fails: ['answers.error-shape'],
    breaks: "the driver's refusals carry code -1, which is not in the PF4 result-code table",
    build: onDriver('PF4', (d) => recoded(d, () => -1)),
  },

  // Frames and close codes
  {
    name: 'frames-small-limit',
    family: 'PF4',
    writes: true,
    fails: ['frames.near-limit'],
    breaks: `a frame past ${SMALL_FRAME_BYTES} bytes is refused (closed with 1009), far under SERVER_MIN_FRAME_BYTES`,
    build: onWire('PF4', () => ({
      fromManager(frame, wire) {
        if (Buffer.byteLength(frame.text) <= SMALL_FRAME_BYTES) return undefined;
        wire.close(1009, 'frame too large');
        return null;
      },
    })),
  },
  {
    name: 'frames-closed-1003',
    family: 'PF4',
    writes: true,
    fails: ['frames.non-json', 'frames.binary', 'frames.no-id'],
    breaks: 'a bad frame closes the connection with 1003 instead of 1007',
    build: onWire('PF4', () => ({ closeCode: (code) => (code === 1007 ? 1003 : code) })),
  },
  {
    name: 'frames-binary-read',
    family: 'PF4',
    writes: true,
    fails: ['frames.binary'],
    timeouts: { answerMs: NEVER_COMES_ANSWER_MS },
    breaks: 'a binary frame is read as text and answered',
    build: onWire('PF4', () => ({
      fromManager: (frame) => (frame.isBinary ? { text: frame.text, isBinary: false } : undefined),
    })),
  },

  // int64
  {
    name: 'int64-rounded',
    family: 'PF5',
    writes: true,
    fails: ['int64.round-trip'],
    breaks: 'UserGet reads its login through a double, so a login past 2^53 − 1 is looked up rounded',
    build: onDriver('PF5', (d) =>
      withCommands(d, {
        UserGet: (args, session) => {
          const asDouble =
            typeof args.login === 'bigint' || typeof args.login === 'number' ? Number(args.login) : args.login;
          const login =
            typeof asDouble === 'number' && Number.isInteger(asDouble) ? canonicalInt(BigInt(asDouble)) : asDouble;
          return d.commands.UserGet({ ...args, login }, session);
        },
      }),
    ),
  },
  {
    name: 'int64-quoted',
    family: 'PF5',
    writes: true,
    fails: ['int64.bare-digits', 'records.schema'],
    breaks:
      'logins travel as quoted strings both ways (the server reads them back), so its account records are not PF5User records either',
    build: onWire('PF5', () => ({
      fromManager: (frame) => {
        const text = frame.text.replace(/"login":"(\d+)"/g, '"login":$1');
        return text === frame.text ? undefined : { text, isBinary: frame.isBinary };
      },
      toManager: (text) => [text.replace(/"login":(\d+)/g, '"login":"$1"')],
    })),
  },

  // Records against the protocol's schemas
  {
    name: 'records-group-without-securities',
    family: 'PF4',
    writes: true,
    fails: ['records.schema'],
    breaks:
      'its groups carry no secGroups (the 32 security entries a PF4 group record must have), in the snapshot, the events and the reads alike',
    build: onDriver('PF4', (d, world) => {
      for (const [name, group] of world.groups) {
        const { secGroups: _dropped, ...rest } = group;
        world.groups.set(name, rest);
      }
      return d;
    }),
  },

  // --writes
  {
    name: 'writes-event-lost',
    family: 'PF4',
    writes: true,
    fails: ['writes.pf4.user-add'],
    breaks: "UserRecordNew creates the account without its users add event (the next change's event brings the record)",
    build: onDriver('PF4', (d, world) =>
      withCommands(d, {
        UserRecordNew: (args, session) => world.quietly(() => d.commands.UserRecordNew(args, session)),
      }),
    ),
  },
  {
    name: 'writes-event-late',
    family: 'PF4',
    writes: true,
    fails: ['writes.pf4.deposit'],
    breaks: "a balance transaction's users update is sent after the answer to the next request",
    build: onDriver('PF4', (d, world) => ({
      ...withCommands(d, {
        TradeTransaction: (args, session) => world.later(() => d.commands.TradeTransaction(args, session)),
      }),
      gate: () => {
        world.releaseHeldAfterThisAnswer();
      },
    })),
  },
  {
    name: 'writes-event-stale',
    family: 'PF4',
    writes: true,
    fails: ['writes.pf4.user-update'],
    breaks:
      "UserRecordUpdate's users update carries the record as it was before the change (the next change's event brings the new one)",
    build: onDriver('PF4', (d, world) =>
      withCommands(d, {
        UserRecordUpdate: (args, session) => {
          const before = world.users.get(args.login as number);
          const after = world.quietly(() => d.commands.UserRecordUpdate(args, session));
          world.change('users', 'update', before);
          return after;
        },
      }),
    ),
  },
  {
    name: 'writes-group-event-stale',
    family: 'PF4',
    writes: true,
    fails: ['writes.pf4.group-update', 'reconnect.fresh-snapshot', 'writes.cache-matches-live'],
    breaks:
      "GroupRecordUpdate's groups update carries the group as it was before the change (the restore's too, so the cache keeps the changed value no later change rewrites: the suite's own, and a reconnected session's against it)",
    build: onDriver('PF4', (d, world) =>
      withCommands(d, {
        GroupRecordUpdate: (args, session) => {
          const before = world.groups.get(String(args.group));
          const after = world.quietly(() => d.commands.GroupRecordUpdate(args, session));
          world.change('groups', 'update', before);
          return after;
        },
      }),
    ),
  },
  {
    name: 'writes-pf5-event-lost',
    family: 'PF5',
    writes: true,
    fails: ['writes.pf5.user-add'],
    breaks: "UserAdd creates the account without its users add event (the next change's event brings the record)",
    build: onDriver('PF5', (d, world) =>
      withCommands(d, { UserAdd: (args, session) => world.quietly(() => d.commands.UserAdd(args, session)) }),
    ),
  },
  {
    name: 'writes-restart-ignored',
    family: 'PF4',
    writes: true,
    fails: ['writes.restart'],
    timeouts: { answerMs: NEVER_COMES_ANSWER_MS },
    breaks: 'SrvRestart answers true and restarts nothing: the sessions stay up',
    build: onDriver('PF4', (d) => withCommands(d, { SrvRestart: () => true })),
  },
];

/**
 * The tap of `snapshot-events-before-end`: the snapshot's frames are held from begin to end, and sent once the kit has
 * written what it held during the snapshot (right after end, in the same turn): begin, those events, the chunks, end.
 */
function eventsBeforeChunks(): WireTap {
  let state: 'live' | 'snapshot' | 'ending' = 'live';
  let snapshot: string[] = [];
  let during: string[] = [];
  return {
    toManager(text, wire) {
      const frame = parsed(text);
      const isEvent = 'event' in frame && !('id' in frame);
      if (isEvent && frame.event === 'resync' && frame.op === 'begin') {
        state = 'snapshot';
        snapshot = [text];
        return [];
      }
      if (state === 'snapshot' && isEvent && frame.event === 'resync') {
        snapshot.push(text);
        if (frame.op === 'end') {
          state = 'ending';
          setImmediate(() => {
            const [begin, ...rest] = snapshot;
            for (const t of [begin, ...during, ...rest]) wire.send(t);
            state = 'live';
            snapshot = [];
            during = [];
          });
        }
        return [];
      }
      if (state === 'ending' && isEvent) {
        during.push(text);
        return [];
      }
      return [text];
    },
  };
}
