/**
 * The chaos soak: a stack of two brokers serving both demo platforms (the first preferred, the second a hot standby)
 * under a steady mixed load while faults are injected at random, one after another, for a set time; then the
 * invariants are checked against the trading server's own records (bench/chaosCheck.ts).
 *
 * The load, on the demo PF4 platform:
 * - a *bank*: `accounts` accounts of the run's own, and writers moving money in and out of them with `TradeTransaction`
 *   `BalanceAdd` (a deposit, or a withdrawal when the amount is negative), each operation under an Idempotency-Key of
 *   its own that is also its comment (the history keeps it), retried with that key as docs/api.md tells a client:
 *   on an unknown outcome (`X-Request-Outcome: unknown`, "still in progress"), on an answer that says nothing was sent,
 *   on a 429 or a `TooFrequent` refusal (after its `Retry-After`), on no answer at all; final on success, on a platform
 *   refusal and on "cannot be known". One account only receives deposits: its balance only grows;
 * - cached reads (that account's balance, a page of trades) and live reads (its balance, the history of a bank account,
 *   the server time) by clients of their own, each of which checks that what only grows never goes back;
 * - unkeyed writes (deposits of 1 to an account of their own), counted;
 * - an SSE client of users and trades and a hub client of `StreamUserUpdates`, whose balance events are checked
 *   against each account's history.
 *
 * The faults (`CHAOS_FAULTS`), drawn in a seeded random order that takes every kind once per round, each with random
 * length and target, with a random calm between (both brokers answering `/readyz` first):
 *   broker-kill   `kill -9` of either broker, started again after 0.5–2.5 s
 *   broker-stop   `SIGSTOP` of either broker for 1.5–5 s, then `SIGCONT`
 *   broker-term   `SIGTERM` of either broker (it drains), started again once it has exited
 *   sim-drop      the trading server drops every manager connection
 *   sim-freeze    the trading server stops answering for 1–3 s
 *   sim-delay     balance operations answered 2.5–4 s late (past their 2 s budget) for 2–4 s
 *   sim-restart   the trading server restarts, down for 1–3 s
 *   link-drop     every link object of the platform loses its socket to its broker
 *   stream-drop   the platform's stream object loses its subscription's socket
 * `npm run chaos` runs it at length (bench/chaos.ts); test/e2e/chaos.test.ts a short one.
 */
import { HubConnectionBuilder, HttpTransportType, LogLevel, type HubConnection } from '@microsoft/signalr';
import { fileURLToPath } from 'node:url';
import { objectCall } from '../launcher/edge.js';
import { startStack } from '../launcher/stack.js';
import { Random, deriveSeed } from '../sim/world/random.js';
import { SseReader } from '../test/support/sse.js';
import { DEFAULT_LINKS_PER_PLATFORM, linkName } from '../workers/gateway/names.js';
import { streamObjectName } from '../workers/streams/fanout.js';
import { LOCAL_HOME } from '../test/support/edge.js';
import { firstAccount } from './faultDrill.js';
import {
  checkChaos,
  type BankAccount,
  type BankOp,
  type ChaosVerdict,
  type FaultWindow,
  type HistoryEntry,
  type ReadSeen,
  type StreamItem,
} from './chaosCheck.js';

export type ChaosFault =
  | 'broker-kill'
  | 'broker-stop'
  | 'broker-term'
  | 'sim-drop'
  | 'sim-freeze'
  | 'sim-delay'
  | 'sim-restart'
  | 'link-drop'
  | 'stream-drop';
export const CHAOS_FAULTS: ChaosFault[] = [
  'broker-kill',
  'broker-stop',
  'broker-term',
  'sim-drop',
  'sim-freeze',
  'sim-delay',
  'sim-restart',
  'link-drop',
  'stream-drop',
];
/** Faults under which a keyed call's outcome may be lost for good (docs/api.md): the broker that knew it, or the connection it came back on, gone. */
const LOSING = new Set<ChaosFault>(['broker-kill', 'broker-stop', 'sim-drop', 'sim-freeze', 'sim-restart']);

export interface ChaosOptions {
  /** How long faults are injected (s); every kind is injected at least once however short. */
  seconds?: number;
  /** Seeds the faults' order, lengths and targets and the writers' operations. */
  seed?: number;
  faults?: ChaosFault[];
  /** Accounts of the bank, writers moving money among them. */
  accounts?: number;
  writers?: number;
  /** The calm between two faults, drawn from this range (ms). */
  calmMs?: [number, number];
  /**
   * Each fault lasts the shortest of its range above (a broker down 0.5 s, stopped 1.5 s, ...), for a short run; the
   * draws, and so the order and targets a seed gives, are the same. Default false: a length drawn from the range.
   */
  shortestFaults?: boolean;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
  /** Every line of the stack's processes. */
  stackLog?: (line: string) => void;
}

interface Count {
  ok: number;
  failed: number;
}

export interface ChaosReport {
  seconds: number;
  seed: number;
  /** Faults injected per kind (a drop that found no socket open is not counted). */
  injected: Record<ChaosFault, number>;
  bank: {
    ops: number;
    attempts: number;
    applied: number;
    refused: number;
    unknowable: { keys: number; applied: number };
    unresolved: number;
    /** Why attempts were repeated: an unknown outcome (incl. "in progress"), nothing sent, 429 / TooFrequent, no HTTP answer. */
    retries: { unknown: number; notSent: number; tooFrequent: number; resets: number; other: number };
  };
  reads: { cached: Count; live: Count; checked: number };
  unkeyed: Count & { unknown: number };
  streams: Array<{ client: string; balanceEvents: number; disconnects: number; resyncs: number; reconnects: number }>;
  verdict: ChaosVerdict;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const SIM = 'demo-pf4';
const OPENING_DEPOSIT = 100_000;
/** How long one operation is retried before it is left without a final answer: past the broker's 120 s for a late answer. */
const SETTLE_MS = 180_000;

type Answer = {
  status: number;
  headers: Headers;
  body: { data?: any; error?: { code: string; managerCode?: unknown; message: string | null } | null };
};

export async function runChaos(options: ChaosOptions = {}): Promise<ChaosReport> {
  const seconds = options.seconds ?? 1200;
  const seed = options.seed ?? 1;
  const faults = options.faults ?? CHAOS_FAULTS;
  const log = options.log ?? (() => {});
  const [calmMin, calmMax] = options.calmMs ?? [1000, 5000];
  const started = Date.now();
  const stack = await startStack({
    seed: 13,
    brokers: 2,
    edgeEntry: fileURLToPath(new URL('./worker/chaosWorker.ts', import.meta.url)),
    edgeVars: { BROKER_FAILBACK_SECONDS: '3', API_RATE_LIMIT: process.env.API_RATE_LIMIT ?? '1000000000' },
    ...(options.stackLog ? { log: options.stackLog } : {}),
  });
  const stopped = new Set<number>();
  const hubs: HubConnection[] = [];
  const sses: SseReader[] = [];
  try {
    let token = await stack.token();
    const base = `${stack.edgeUrl}/api/v2/PF4/${stack.platforms.pf4}`;
    const run = Date.now().toString(36).slice(-6);
    const keyPrefix = `ck-${run}-`;
    const request = async (
      path: string,
      init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
    ): Promise<Answer | null> => {
      try {
        const res = await fetch(`${base}/${path}`, {
          method: init.method ?? 'GET',
          headers: {
            authorization: `Bearer ${token}`,
            ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
            ...init.headers,
          },
          body: init.body === undefined ? undefined : JSON.stringify(init.body),
        });
        return { status: res.status, headers: res.headers, body: (await res.json()) as Answer['body'] };
      } catch {
        return null;
      }
    };
    /** A read until it succeeds (set-up and the final reads, with no fault going on). */
    const mustRead = async <T>(path: string): Promise<T> => {
      for (let i = 0; i < 150; i++) {
        const r = await request(path);
        if (r?.body.error === null && r.body.data !== undefined) return r.body.data as T;
        await sleep(200);
      }
      throw new Error(`could not read ${path}`);
    };

    // ---- the bank's accounts, opened before the streams and the money ----
    const { group } = await firstAccount(base, { authorization: `Bearer ${token}` });
    const count = Math.max(2, options.accounts ?? 6);
    const logins: number[] = [];
    for (let i = 0; i <= count; i++) {
      const made = await request('UserRecordNew', { method: 'POST', body: { group, name: `Chaos ${run} ${i}` } });
      if (!made?.body.data?.login)
        throw new Error(`could not open a bank account: ${JSON.stringify(made?.body ?? null)}`);
      logins.push(made.body.data.login as number);
    }
    // The last account takes the unkeyed writes; the first only receives deposits (its balance only grows).
    const unkeyedLogin = logins.pop()!;
    const growth = logins[0];
    const bankLogins = new Set(logins);
    const opening = new Map<number, number>();
    for (const login of logins)
      opening.set(login, (await mustRead<{ balance: number }>(`UserRecordRequest/${login}`)).balance);

    // ---- the streams, open before the first operation ----
    const streams = new Map<
      string,
      { items: StreamItem[]; disconnects: number; resyncs: number; reconnects: number }
    >();
    const streamOf = (client: string) =>
      streams.get(client) ?? streams.set(client, { items: [], disconnects: 0, resyncs: 0, reconnects: 0 }).get(client)!;
    const see = (client: string, item: StreamItem) => {
      const s = streamOf(client);
      if (item.type === 'resync') s.resyncs++;
      if (item.type === 'status' && !item.connected) s.disconnects++;
      s.items.push(item);
    };
    const userItem = (data: { login?: unknown; balance?: unknown }): StreamItem | null =>
      typeof data.login === 'number' && bankLogins.has(data.login) && typeof data.balance === 'number'
        ? { type: 'balance', login: data.login, balance: data.balance, at: Date.now() }
        : null;

    // SSE: events read as they come; an ended stream is opened again with its last event id (replayed, or a resync).
    let sse = await SseReader.open(`${base}/Stream?users&trades`, token);
    sses.push(sse);
    let sseRead = 0;
    const pumpSse = () => {
      for (; sseRead < sse.events.length; sseRead++) {
        const e = sse.events[sseRead];
        if (e.event === 'status')
          see('sse', { type: 'status', connected: (JSON.parse(e.data) as { connected: boolean }).connected });
        else if (e.event === 'resync') see('sse', { type: 'resync' });
        else if (e.event === 'users') {
          const item = userItem(JSON.parse(e.data));
          if (item) see('sse', item);
        }
      }
    };
    let streaming = true;
    const sseLoop = (async () => {
      while (streaming) {
        pumpSse();
        if (sse.ended && streaming) {
          streamOf('sse').reconnects++;
          log(
            `${new Date().toISOString().slice(11, 19)} the SSE stream ended: opened again from event ${sse.lastEventId}`,
          );
          const last = sse.lastEventId ?? undefined;
          for (let tries = 0; streaming; tries++) {
            try {
              sse = await SseReader.open(`${base}/Stream?users&trades`, token, last);
              break;
            } catch (error) {
              if (tries % 10 === 0)
                log(`  the SSE stream could not be opened again: ${String((error as Error).cause ?? error)}`);
              await sleep(200);
            }
          }
          sses.push(sse);
          sseRead = 0;
        }
        await sleep(100);
      }
      pumpSse();
    })();

    // Hub: a closed connection is replaced by a new one, which (reading the state afresh) counts as a resync.
    const openHub = async (): Promise<void> => {
      const connection = new HubConnectionBuilder()
        .withUrl(`${stack.edgeUrl}/hubs/pf4/v2?tradePlatform=${stack.platforms.pf4}`, {
          accessTokenFactory: () => token,
          transport: HttpTransportType.WebSockets,
        })
        .configureLogging(LogLevel.None)
        .build();
      hubs.push(connection);
      connection.on('OnConnectionStatus', (s: { connected: boolean }) =>
        see('hub', { type: 'status', connected: s.connected }),
      );
      connection.on('OnResync', () => see('hub', { type: 'resync' }));
      connection.onclose((error) => {
        if (!streaming) return;
        log(
          `${new Date().toISOString().slice(11, 19)} the hub connection closed (${error?.message ?? 'no error'}): a new one opened`,
        );
        streamOf('hub').reconnects++;
        see('hub', { type: 'resync' });
        void (async () => {
          while (streaming) {
            try {
              return await openHub();
            } catch {
              await sleep(500);
            }
          }
        })();
      });
      await connection.start();
      connection.stream('StreamUserUpdates').subscribe({
        next: (u: { login?: unknown; balance?: unknown }) => {
          const item = userItem(u);
          if (item) see('hub', item);
        },
        error: () => {},
        complete: () => {},
      });
    };
    await openHub();
    const connectedBoth = async () => {
      for (let i = 0; i < 200; i++) {
        pumpSse();
        const up = (c: string) => streamOf(c).items.some((x) => x.type === 'status' && x.connected);
        if (up('sse') && up('hub')) return;
        await sleep(100);
      }
      throw new Error('the stream clients were not connected within 20 s');
    };
    await connectedBoth();

    // ---- the bank ----
    const ops: BankOp[] = [];
    const retries = { unknown: 0, notSent: 0, tooFrequent: 0, resets: 0, other: 0 };
    let attempts = 0;
    let serial = 0;
    /** One operation, retried under its key until its answer is final (or SETTLE_MS has passed). */
    const settle = async (login: number, amount: number): Promise<void> => {
      const op: BankOp = {
        key: `${keyPrefix}${serial++}`,
        login,
        amount,
        final: null,
        startedAt: Date.now(),
        endedAt: 0,
      };
      ops.push(op);
      const until = Date.now() + SETTLE_MS;
      while (op.final === null && Date.now() < until) {
        attempts++;
        const r = await request('TradeTransaction?requestTimeout=2', {
          method: 'POST',
          headers: { 'idempotency-key': op.key },
          body: { tradeTransactionType: 'BalanceAdd', orderBy: login, price: amount, comment: op.key },
        });
        const wait = Number(r?.headers.get('retry-after')) * 1000 || 200;
        const error = r?.body.error;
        if (!r) retries.resets++;
        else if (r.status === 429 || (error?.code === 'PF4Error' && error.managerCode === 'TooFrequent'))
          retries.tooFrequent++;
        else if (error === null && r.body.data) op.final = 'applied';
        else if (error && /cannot be known/.test(error.message ?? '')) op.final = 'unknowable';
        else if (r.headers.get('x-request-outcome') === 'unknown') retries.unknown++;
        else if (error?.code === 'NoConnect') retries.notSent++;
        else if (error && ['PF4Error', 'NotFound', 'Validation', 'Forbidden'].includes(error.code))
          op.final = 'refused';
        else retries.other++;
        if (op.final === null) await sleep(wait);
      }
      op.endedAt = Date.now();
    };
    // Each account's opening deposit, before any fault.
    await Promise.all(logins.map((login) => settle(login, OPENING_DEPOSIT)));

    let running = true;
    const writer = async (n: number) => {
      const random = new Random(deriveSeed(seed, `writer ${n}`));
      while (running) {
        const login = random.pick(logins);
        const cents = random.int(100, 50_000);
        const amount = (login !== growth && random.chance(0.45) ? -cents : cents) / 100;
        await settle(login, amount);
        await sleep(random.int(20, 150));
      }
    };

    // ---- readers: each its own client, checking that what only grows never goes back ----
    const reads: ReadSeen[] = [];
    const readCounts = { cached: { ok: 0, failed: 0 }, live: { ok: 0, failed: 0 } };
    const reader = (kind: 'cached' | 'live') => async () => {
      const random = new Random(deriveSeed(seed, `reader ${kind}`));
      let i = 0;
      while (running) {
        const n = i++ % 3;
        let path: string;
        let figure: ((data: any) => { subject: string; value: number }) | null = null;
        if (kind === 'cached') {
          path = n === 2 ? 'TradesGet?limit=20' : `UserRecordGet/${growth}`;
          if (n !== 2) figure = (d: { balance: number }) => ({ subject: `balance ${growth}`, value: d.balance });
        } else if (n === 0) {
          path = `UserRecordRequest/${growth}`;
          figure = (d: { balance: number }) => ({ subject: `balance ${growth}`, value: d.balance });
        } else if (n === 1) {
          const login = random.pick(logins);
          path = `TradesUserHistory/${login}`;
          figure = (d: unknown[]) => ({ subject: `history ${login}`, value: d.length });
        } else path = 'ServerTime';
        const r = await request(path);
        if (r?.body.error === null && r.body.data !== undefined) {
          readCounts[kind].ok++;
          if (figure) reads.push({ client: kind, ...figure(r.body.data), at: Date.now() });
        } else readCounts[kind].failed++;
        await sleep(20);
      }
    };
    const unkeyed = { ok: 0, failed: 0, unknown: 0 };
    const unkeyedWriter = async () => {
      let n = 0;
      while (running) {
        const r = await request('TradeTransaction?requestTimeout=2', {
          method: 'POST',
          body: { tradeTransactionType: 'BalanceAdd', orderBy: unkeyedLogin, price: 1, comment: `cu-${run}-${n++}` },
        });
        if (r?.body.error === null) unkeyed.ok++;
        else if (r?.headers.get('x-request-outcome') === 'unknown') unkeyed.unknown++;
        else unkeyed.failed++;
        await sleep(100);
      }
    };
    const tokenLoop = async () => {
      // Tokens last an hour: the HTTP clients take a fresh one every ten minutes.
      for (let at = Date.now(); running; await sleep(1000)) {
        if (Date.now() - at > 600_000) {
          token = await stack.token().catch(() => token);
          at = Date.now();
        }
      }
    };
    const loops = [
      ...Array.from({ length: options.writers ?? 4 }, (_, n) => writer(n)),
      reader('cached')(),
      reader('live')(),
      unkeyedWriter(),
      tokenLoop(),
    ];

    // ---- the faults ----
    const injected = Object.fromEntries(CHAOS_FAULTS.map((f) => [f, 0])) as Record<ChaosFault, number>;
    const windows: FaultWindow[] = [];
    const random = new Random(deriveSeed(seed, 'faults'));
    const bothReady = async () => {
      for (let i = 0; i < 300; i++) {
        const ready = await Promise.all(
          stack.brokerUrls.map((u) =>
            fetch(`${u}/readyz`).then(
              (r) => r.ok,
              () => false,
            ),
          ),
        );
        if (ready.every(Boolean)) return;
        await sleep(100);
      }
      throw new Error('the brokers were not both ready within 30 s');
    };
    /** A fault's length, drawn from its range (its shortest with `shortestFaults`). */
    const length = (min: number, max: number) => {
      const drawn = random.int(min, max);
      return options.shortestFaults ? min : drawn;
    };
    const inject = async (fault: ChaosFault): Promise<string | null> => {
      const i = random.int(0, 1);
      switch (fault) {
        case 'broker-kill': {
          const downMs = length(500, 2500);
          await stack.stopBroker(i, 'SIGKILL');
          await sleep(downMs);
          await stack.restartBroker(i);
          return `broker ${i}, down ${downMs} ms`;
        }
        case 'broker-stop': {
          const ms = length(1500, 5000);
          stopped.add(i);
          stack.brokers[i].child.kill('SIGSTOP');
          await sleep(ms);
          stack.brokers[i].child.kill('SIGCONT');
          stopped.delete(i);
          return `broker ${i}, ${ms} ms`;
        }
        case 'broker-term':
          await stack.stopBroker(i, 'SIGTERM', { graceMs: 60_000 });
          await stack.restartBroker(i);
          return `broker ${i}`;
        case 'sim-drop':
          await stack.control(SIM, 'drop');
          return '';
        case 'sim-freeze': {
          const ms = length(1000, 3000);
          await stack.control(SIM, 'freeze', { on: true });
          await sleep(ms);
          await stack.control(SIM, 'freeze', { on: false });
          return `${ms} ms`;
        }
        case 'sim-delay': {
          const late = length(2500, 4000);
          const ms = length(2000, 4000);
          await stack.control(SIM, 'delay', { ms: late, cmd: 'TradeTransaction' });
          await sleep(ms);
          await stack.control(SIM, 'delay', { ms: 0 });
          return `answers ${late} ms late for ${ms} ms`;
        }
        case 'sim-restart': {
          const downMs = length(1000, 3000);
          await stack.control(SIM, 'restart', { downMs });
          await sleep(downMs);
          return `down ${downMs} ms`;
        }
        case 'link-drop': {
          const names = Array.from({ length: DEFAULT_LINKS_PER_PLATFORM }, (_, n) =>
            linkName(stack.platforms.pf4, LOCAL_HOME.region, n),
          );
          const dropped = await Promise.all(
            names.map((name) => objectCall<boolean>(stack.edge.miniflare, 'LINKS', name, 'dropBrokerSocket')),
          );
          const n = dropped.filter(Boolean).length;
          return n > 0 ? `${n} of ${names.length} link objects` : null;
        }
        case 'stream-drop':
          return (await objectCall<boolean>(
            stack.edge.miniflare,
            'STREAMS',
            streamObjectName(stack.platforms.pf4, LOCAL_HOME.region, 0),
            'dropBrokerSocket',
          ))
            ? ''
            : null;
      }
    };
    const faultsUntil = Date.now() + seconds * 1000;
    /** Every kind once, in a random order. */
    const round = (): ChaosFault[] => {
      const deck = [...faults];
      for (let k = deck.length - 1; k > 0; k--) {
        const j = random.int(0, k);
        [deck[k], deck[j]] = [deck[j], deck[k]];
      }
      return deck;
    };
    // The first round is injected whole, however short the time; later ones until the time is up.
    let deck = round();
    let rounds = 0;
    for (;;) {
      if (deck.length === 0) {
        rounds++;
        deck = round();
      }
      if (rounds > 0 && Date.now() >= faultsUntil) break;
      const fault = deck.shift()!;
      await bothReady();
      await sleep(random.int(calmMin, calmMax));
      const from = Date.now();
      const what = await inject(fault);
      const to = Date.now();
      if (what !== null) {
        injected[fault]++;
        if (LOSING.has(fault)) windows.push({ kind: fault, from, to: to + 3000 });
      }
      log(
        `${new Date(from).toISOString().slice(11, 19)} ${fault}${what ? ` (${what})` : ''}${what === null ? ': nothing to drop' : ''}`,
      );
    }
    log('faults over: settling the operations in flight');
    running = false;
    await Promise.all(loops);
    await bothReady();

    // ---- the truth: each account's balance and history, read live; then the streams given time to catch up ----
    const accounts: BankAccount[] = [];
    for (const login of logins) {
      const closing = (await mustRead<{ balance: number }>(`UserRecordRequest/${login}`)).balance;
      const history = (await mustRead<Array<HistoryEntry & { tradeCommand: string }>>(`TradesUserHistory/${login}`))
        .filter((e) => e.tradeCommand === 'Balance')
        .map(({ order, login: l, profit, comment }) => ({ order, login: l, profit, comment }));
      accounts.push({ login, opening: opening.get(login)!, closing, history });
    }
    const caughtUp = (client: string) =>
      accounts.every((a) => {
        const last = streamOf(client)
          .items.filter((x) => x.type === 'balance' && x.login === a.login)
          .at(-1);
        return last?.type === 'balance' && Math.round(last.balance * 100) === Math.round(a.closing * 100);
      });
    for (let i = 0; i < 150 && !(caughtUp('sse') && caughtUp('hub')); i++) {
      pumpSse();
      await sleep(100);
    }
    streaming = false;
    await sseLoop;

    const verdict = checkChaos({
      accounts,
      ops,
      reads,
      keyPrefix,
      losingFaults: windows,
      streams: [...streams].map(([client, s]) => ({ client, fromStart: true, items: s.items })),
    });
    return {
      seconds: Math.round((Date.now() - started) / 100) / 10,
      seed,
      injected,
      bank: {
        ops: ops.length,
        attempts,
        applied: ops.filter((o) => o.final === 'applied').length,
        refused: ops.filter((o) => o.final === 'refused').length,
        unknowable: verdict.unknowable,
        unresolved: ops.filter((o) => o.final === null).length,
        retries,
      },
      reads: { ...readCounts, checked: reads.length },
      unkeyed,
      streams: [...streams].map(([client, s]) => ({
        client,
        balanceEvents: s.items.filter((x) => x.type === 'balance').length,
        disconnects: s.disconnects,
        resyncs: s.resyncs,
        reconnects: s.reconnects,
      })),
      verdict,
    };
  } finally {
    for (const i of stopped) stack.brokers[i]?.child.kill('SIGCONT');
    await stack.control(SIM, 'freeze', { on: false }).catch(() => {});
    await stack.control(SIM, 'delay', { ms: 0 }).catch(() => {});
    await Promise.all(hubs.map((h) => h.stop().catch(() => {})));
    await Promise.all(sses.map((s) => s.close().catch(() => {})));
    await stack.close();
  }
}

/** The report as a table for a terminal. */
export function formatChaosReport(r: ChaosReport): string {
  const b = r.bank;
  const lines = [
    `chaos soak: two brokers, seed ${r.seed}, ${r.seconds} s`,
    '  fault            injected',
    ...CHAOS_FAULTS.map((f) => `  ${f.padEnd(16)} ${String(r.injected[f]).padStart(8)}`),
    `  bank operations  ${b.ops} (${b.attempts} attempts): applied ${b.applied}, refused ${b.refused}, ` +
      `cannot be known ${b.unknowable.keys} (applied on the server: ${b.unknowable.applied}), without a final answer ${b.unresolved}`,
    `  retried on       unknown outcome ${b.retries.unknown}, not sent ${b.retries.notSent}, 429 / TooFrequent ${b.retries.tooFrequent}, ` +
      `no HTTP answer ${b.retries.resets}, other ${b.retries.other}`,
    `  reads            cached ${r.reads.cached.ok} ok / ${r.reads.cached.failed} failed, live ${r.reads.live.ok} ok / ${r.reads.live.failed} failed, ${r.reads.checked} checked for staleness`,
    `  unkeyed writes   ${r.unkeyed.ok} ok, ${r.unkeyed.failed} failed, ${r.unkeyed.unknown} unknown outcome`,
    ...r.streams.map(
      (s) =>
        `  stream ${s.client.padEnd(9)} ${s.balanceEvents} balance events, ${s.disconnects} disconnects, ${s.resyncs} resyncs, ${s.reconnects} reconnects`,
    ),
    `  verdict          ${r.verdict.violations.length === 0 ? 'HELD: 0 violations' : `NOT HELD: ${r.verdict.violations.length} violations`}`,
    ...r.verdict.violations.map((v) => `    ${v.kind}: ${v.detail}`),
  ];
  return lines.join('\n');
}
