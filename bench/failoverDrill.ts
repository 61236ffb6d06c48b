/**
 * The failover drill: a stack of two brokers serving the same demo platforms (the first preferred), under a steady
 * mixed load (cached and live reads, writes with and without an Idempotency-Key, one SSE client and one hub client),
 * while the brokers are faulted one way after another:
 * - `kill`: `kill -9` of the broker serving the platforms, started again `downMs` later;
 * - `stop`: `SIGSTOP` of it (no FIN, no RST, no answers) for `stopMs` (or until the standby took over, with
 *   `resumeOnTakeover`), then `SIGCONT`;
 * - `rolling`: a rolling restart, `SIGTERM` (the broker drains) then a new start, of each broker in turn;
 * - `standby-loss`: `kill -9` of the standby, started again `downMs` later.
 * Before each fault the drill waits for the calm state: both brokers up and every link object on the preferred broker.
 *
 * Per fault it counts, for the requests that began while the fault lasted and until the calm came back: failed reads,
 * failed writes, writes left with an unknown outcome (and how many of those were not in flight on the broker that was
 * lost, which should be none), keyed writes lost or duplicated (checked against the trading server's own accounts at
 * the end), the takeover time (from the fault to every link object serving from the survivor) and what the stream
 * clients saw (status changes, resync notices, the longest gap between a disconnected and a connected status).
 * `npm run drill:failover` runs it at length (bench/failover.ts); test/e2e/failoverDrill.test.ts a short one.
 */
import { HubConnectionBuilder, HttpTransportType, LogLevel, type HubConnection } from '@microsoft/signalr';
import { objectCall } from '../launcher/edge.js';
import { firstAccount, serverAccounts } from './faultDrill.js';
import { startStack, type Stack } from '../launcher/stack.js';
import { linkName } from '../workers/gateway/names.js';
import { LOCAL_HOME } from '../test/support/edge.js';
import type { BrokerSetStats } from '../workers/gateway/messages.js';

export type FailoverFault = 'kill' | 'stop' | 'rolling' | 'standby-loss';
export const FAILOVER_FAULTS: FailoverFault[] = ['kill', 'stop', 'rolling', 'standby-loss'];

export interface FailoverOptions {
  faults?: FailoverFault[];
  /** How long the serving broker stays stopped in `stop` (ms). */
  stopMs?: number;
  /**
   * `stop` resumes the broker as soon as every link object has moved to the standby (still at most `stopMs`), for a
   * short run; default false: it stays stopped for `stopMs`.
   */
  resumeOnTakeover?: boolean;
  /** How long a killed broker (`kill`, `standby-loss`) stays down before it is started again (ms). */
  downMs?: number;
  /** Calm load before each fault and after the calm state came back (ms). */
  calmMs?: number;
  /** The edge's hold-down before links return to the preferred broker (seconds; `BROKER_FAILBACK_SECONDS`). */
  holdDownSeconds?: number;
  /** Concurrent loops of each kind of request. */
  readers?: number;
  writers?: number;
  log?: (line: string) => void;
  /** Every line of the stack's processes (simulator, brokers, edge), for a run that needs explaining. */
  stackLog?: (line: string) => void;
}

interface Count {
  ok: number;
  failed: number;
}
interface WriteCount extends Count {
  unknown: number;
}

export interface StreamFigure {
  /** Status events `connected: false` seen, resync notices seen, and the longest false → true gap (ms). */
  disconnects: number;
  resyncs: number;
  longestGapMs: number | null;
  /** The stream ended (an error, a close) instead of carrying on. */
  ended: boolean;
}

export interface FailoverRow {
  fault: FailoverFault;
  cached: Count;
  live: Count;
  unkeyed: WriteCount;
  keyed: WriteCount & { lost: number; duplicated: number };
  /** Writes answered with an unknown outcome that were not in flight on the broker lost (should be 0). */
  unknownNotInFlight: number;
  /** From the fault to every link object serving from the survivor (ms); null when no link had to move. */
  takeoverMs: number | null;
  sse: StreamFigure;
  hub: StreamFigure;
  /** Requests that got no HTTP answer at all (a reset connection). */
  resets: number;
}

export interface FailoverReport {
  rows: FailoverRow[];
  seconds: number;
  links: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Requests are attributed to the phase they began in. */
type Phase = FailoverFault | 'calm';

interface KeyedWrite {
  key: string;
  name: string;
  phase: Phase;
  final: 'ok' | 'refused' | 'unknown' | null;
  login: number | null;
  startedAt: number;
  endedAt: number;
}

export async function runFailoverDrill(options: FailoverOptions = {}): Promise<FailoverReport> {
  const log = options.log ?? (() => {});
  const faults = options.faults ?? FAILOVER_FAULTS;
  const calmMs = options.calmMs ?? 3000;
  const stopMs = options.stopMs ?? 10_000;
  const holdDown = options.holdDownSeconds ?? 3;
  const started = Date.now();
  const links = 4;
  const stack = await startStack({
    seed: 11,
    brokers: 2,
    edgeVars: { LINKS_PER_PLATFORM: String(links), BROKER_FAILBACK_SECONDS: String(holdDown) },
    ...(options.stackLog ? { log: options.stackLog } : {}),
  });
  const rows = new Map<FailoverFault, FailoverRow>();
  const clients: HubConnection[] = [];
  const aborts: AbortController[] = [];
  try {
    const token = await stack.token();
    const auth = { authorization: `Bearer ${token}` };
    const base = `${stack.edgeUrl}/api/v2/PF4/${stack.platforms.pf4}`;
    const { login, group } = await firstAccount(base, auth);

    let phase: Phase = 'calm';
    const row = (p: Phase): FailoverRow | undefined => (p === 'calm' ? undefined : rows.get(p));
    let resets = 0;
    let running = true;
    const keyedWrites: KeyedWrite[] = [];
    /** When each fault's broker was lost, and when every link had left it: writes in flight between are expected unknown. */
    const lossWindows: Array<{ from: number; to: number }> = [];
    const unknownAt: Array<{ phase: Phase; startedAt: number; endedAt: number }> = [];
    const run = Date.now().toString(36);
    let serial = 0;

    const fetchJson = async (url: string, init: RequestInit = {}) => {
      try {
        const res = await fetch(url, { ...init, headers: { ...auth, ...(init.headers ?? {}) } });
        const body = (await res.json()) as { data?: unknown; error?: { code: string; message: string } | null };
        return { status: res.status, outcome: res.headers.get('x-request-outcome'), body };
      } catch {
        resets++;
        return null;
      }
    };
    const reader = (kind: 'cached' | 'live', paths: string[]) => async () => {
      let i = 0;
      while (running) {
        const p = phase;
        const r = await fetchJson(`${base}/${paths[i++ % paths.length]}`);
        const target = row(p)?.[kind];
        if (target) {
          if (r && r.status === 200 && r.body.error === null) target.ok++;
          else target.failed++;
        }
        await sleep(10);
      }
    };
    const unkeyedWriter = async () => {
      while (running) {
        const p = phase;
        const startedAt = Date.now();
        const r = await fetchJson(`${base}/UserRecordNew?requestTimeout=3`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ group, name: `Failover ${run} u${serial++}` }),
        });
        const target = row(p)?.unkeyed;
        if (r?.outcome === 'unknown') unknownAt.push({ phase: p, startedAt, endedAt: Date.now() });
        if (target) {
          if (r && r.body.error === null) target.ok++;
          else if (r?.outcome === 'unknown') target.unknown++;
          else target.failed++;
        }
        await sleep(50);
      }
    };
    const keyedWriter = async () => {
      while (running) {
        const w: KeyedWrite = {
          key: `failover-${run}-${serial}`,
          name: `Failover ${run} k${serial}`,
          phase,
          final: null,
          login: null,
          startedAt: Date.now(),
          endedAt: 0,
        };
        serial++;
        keyedWrites.push(w);
        await settleKeyed(w, Date.now() + 60_000);
        await sleep(50);
      }
    };
    const settleKeyed = async (w: KeyedWrite, until: number) => {
      while (w.final === null && Date.now() < until) {
        const r = await fetchJson(`${base}/UserRecordNew?requestTimeout=3`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': w.key },
          body: JSON.stringify({ group, name: w.name }),
        });
        if (r && r.body.error === null && r.body.data) {
          w.final = 'ok';
          w.login = (r.body.data as { login?: number }).login ?? null;
        } else if (r?.body.error && /cannot be known/.test(r.body.error.message)) {
          w.final = 'unknown';
        } else if (r?.body.error && ['PF4Error', 'Validation', 'Forbidden'].includes(r.body.error.code)) {
          w.final = 'refused';
        } else {
          await sleep(200); // in progress, not sent, a link lost: the same key again
        }
      }
      w.endedAt = Date.now();
    };

    // Streams: an SSE client on trades and ticks, a hub client with a trade stream and ticks.
    const sse = streamWatch();
    const sseAbort = new AbortController();
    aborts.push(sseAbort);
    void readSse(`${base}/Stream?ticks=EURUSD&trades`, token, sseAbort.signal, (event) => sse.event(event));
    const hub = streamWatch();
    const connection = new HubConnectionBuilder()
      .withUrl(`${stack.edgeUrl}/hubs/pf4/v2?tradePlatform=${stack.platforms.pf4}`, {
        accessTokenFactory: () => token,
        transport: HttpTransportType.WebSockets,
      })
      .configureLogging(LogLevel.None)
      .build();
    clients.push(connection);
    connection.on('OnConnectionStatus', (s: { connected: boolean }) =>
      hub.event({ type: 'status', connected: s.connected }),
    );
    connection.on('OnResync', () => hub.event({ type: 'resync' }));
    connection.onclose(() => hub.event({ type: 'ended' }));
    await connection.start();
    await connection.invoke('SubscribeToTicks', 'EURUSD');
    connection
      .stream('StreamTrades')
      .subscribe({ next: () => {}, error: () => hub.event({ type: 'ended' }), complete: () => {} });

    const times = (n: number, loop: () => Promise<void>) => Array.from({ length: n }, () => loop());
    const readers = options.readers ?? 2;
    const writers = options.writers ?? 1;
    const loops = [
      ...times(readers, reader('cached', [`UserRecordGet/${login}`, 'TradesGet?limit=20'])),
      ...times(readers, reader('live', [`UserRecordRequest/${login}`, 'ServerTime'])),
      ...times(writers, unkeyedWriter),
      ...times(writers * 2, keyedWriter),
    ];

    const linkStats = () => linkStatsOf(stack, links);
    await calm(stack, linkStats, holdDown);
    for (const fault of faults) {
      await sleep(calmMs);
      log(`fault ${fault}`);
      rows.set(fault, emptyRow(fault));
      sse.reset();
      hub.reset();
      phase = fault;
      const faultAt = Date.now();
      const takeover = fault === 'standby-loss' ? null : waitTakeover(linkStats, stack.brokerUrls[1]);
      const stopFor = options.resumeOnTakeover && takeover ? takeover.then(() => {}) : undefined;
      await inject(stack, fault, stopMs, options.downMs ?? 2000, log, stopFor);
      const takeoverMs = takeover ? await takeover.then((at) => (at === null ? null : at - faultAt)) : null;
      if (fault === 'kill' || fault === 'stop') lossWindows.push({ from: faultAt, to: faultAt + (takeoverMs ?? 0) });
      await calm(stack, linkStats, holdDown);
      await sleep(calmMs);
      phase = 'calm';
      const r = rows.get(fault)!;
      r.takeoverMs = takeoverMs;
      r.sse = sse.figure();
      r.hub = hub.figure();
      log(
        `  takeover ${takeoverMs === null ? '—' : `${takeoverMs} ms`}; reads ${r.cached.failed + r.live.failed} failed of ${r.cached.ok + r.cached.failed + r.live.ok + r.live.failed}`,
      );
    }
    running = false;
    await Promise.all(loops);
    log('settling the keyed writes');
    await Promise.all(keyedWrites.filter((w) => w.final === null).map((w) => settleKeyed(w, Date.now() + 30_000)));

    const accounts = await serverAccounts(base, auth);
    const byName = new Map<string, number[]>();
    for (const a of accounts) byName.set(a.name, [...(byName.get(a.name) ?? []), a.login]);
    for (const w of keyedWrites) {
      const r = row(w.phase);
      if (!r) continue;
      const logins = byName.get(w.name) ?? [];
      if (logins.length > 1) r.keyed.duplicated += logins.length - 1;
      if (w.final === 'ok') {
        r.keyed.ok++;
        if (w.login === null || !logins.includes(w.login)) r.keyed.lost++;
      } else if (w.final === 'unknown') {
        r.keyed.unknown++;
        unknownAt.push({ phase: w.phase, startedAt: w.startedAt, endedAt: w.endedAt });
      } else r.keyed.failed++;
    }
    for (const u of unknownAt) {
      const r = row(u.phase);
      if (!r) continue;
      const inFlight = lossWindows.some((l) => u.startedAt <= l.to && u.endedAt >= l.from);
      if (!inFlight) r.unknownNotInFlight++;
    }
    for (const r of rows.values()) r.resets = resets;
    return { rows: [...rows.values()], seconds: Math.round((Date.now() - started) / 100) / 10, links };
  } finally {
    for (const a of aborts) a.abort();
    await Promise.all(clients.map((c) => c.stop().catch(() => {})));
    await stack.close();
  }
}

function emptyRow(fault: FailoverFault): FailoverRow {
  const stream = (): StreamFigure => ({ disconnects: 0, resyncs: 0, longestGapMs: null, ended: false });
  return {
    fault,
    cached: { ok: 0, failed: 0 },
    live: { ok: 0, failed: 0 },
    unkeyed: { ok: 0, failed: 0, unknown: 0 },
    keyed: { ok: 0, failed: 0, unknown: 0, lost: 0, duplicated: 0 },
    unknownNotInFlight: 0,
    takeoverMs: null,
    sse: stream(),
    hub: stream(),
    resets: 0,
  };
}

/** Injects one fault and returns once the faulted broker is back (started again, or resumed). */
async function inject(
  stack: Stack,
  fault: FailoverFault,
  stopMs: number,
  downMs: number,
  log: (line: string) => void,
  /** Resumes a `stop` once this settles, if before `stopMs`. */
  tookOver: Promise<void> | undefined,
): Promise<void> {
  const exited = (i: number) =>
    new Promise<void>((resolve) => {
      const child = stack.brokers[i].child;
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
  switch (fault) {
    case 'kill':
      stack.brokers[0].child.kill('SIGKILL');
      await exited(0);
      await sleep(downMs);
      await stack.restartBroker(0);
      return;
    case 'stop':
      stack.brokers[0].child.kill('SIGSTOP');
      await Promise.race([sleep(stopMs), ...(tookOver ? [tookOver] : [])]);
      stack.brokers[0].child.kill('SIGCONT');
      return;
    case 'rolling':
      for (const i of [0, 1]) {
        log(`  SIGTERM broker ${i}`);
        stack.brokers[i].child.kill('SIGTERM');
        await exited(i);
        await stack.restartBroker(i);
        // The next broker drains only once this one is back in the pair.
        await sleep(1000);
      }
      return;
    case 'standby-loss':
      stack.brokers[1].child.kill('SIGKILL');
      await exited(1);
      await sleep(downMs);
      await stack.restartBroker(1);
  }
}

/** Every link object of the demo platforms, as it sees its brokers (null: not used yet). */
async function linkStatsOf(stack: Stack, links: number): Promise<Array<BrokerSetStats | null>> {
  const names = [stack.platforms.pf4, stack.platforms.pf5].flatMap((platform) =>
    Array.from({ length: links }, (_, n) => linkName(platform, LOCAL_HOME.region, n)),
  );
  return Promise.all(
    names.map((name) => objectCall<BrokerSetStats | null>(stack.edge.miniflare, 'LINKS', name, 'brokerStats')),
  );
}

/**
 * Resolves, once every link object in use serves from `survivor`, with the moment the last of them moved there (each
 * object tells when it last moved, so the figure does not depend on how often this asks); null: not within 30 s.
 */
async function waitTakeover(
  stats: () => Promise<Array<BrokerSetStats | null>>,
  survivor: string,
): Promise<number | null> {
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    const all = (await stats()).filter((s) => s !== null);
    if (all.length > 0 && all.every((s) => s.current === survivor))
      return Math.max(...all.map((s) => s.lastMoveAt ?? 0));
    await sleep(25);
  }
  return null;
}

/** Waits for both brokers up and every link object in use on the preferred broker (failback after the hold-down). */
async function calm(
  stack: Stack,
  stats: () => Promise<Array<BrokerSetStats | null>>,
  holdDownSeconds: number,
): Promise<void> {
  const until = Date.now() + 60_000 + holdDownSeconds * 1000;
  while (Date.now() < until) {
    const ready = await Promise.all(
      stack.brokerUrls.map((u) =>
        fetch(`${u}/readyz`).then(
          (r) => r.ok,
          () => false,
        ),
      ),
    );
    const all = (await stats()).filter((s) => s !== null);
    if (
      ready.every(Boolean) &&
      all.every((s) => s.current === stack.brokerUrls[0] && s.brokers.every((b) => b.health === 'ok'))
    )
      return;
    await sleep(100);
  }
  throw new Error('the pair did not come back to its calm state within a minute');
}

type StreamSeen = { type: 'status'; connected: boolean } | { type: 'resync' } | { type: 'ended' };

function streamWatch() {
  let figure: StreamFigure = { disconnects: 0, resyncs: 0, longestGapMs: null, ended: false };
  let downAt: number | null = null;
  return {
    event(e: StreamSeen) {
      if (e.type === 'resync') figure.resyncs++;
      else if (e.type === 'ended') figure.ended = true;
      else if (!e.connected) {
        figure.disconnects++;
        downAt ??= Date.now();
      } else if (downAt !== null) {
        const gap = Date.now() - downAt;
        figure.longestGapMs = Math.max(figure.longestGapMs ?? 0, gap);
        downAt = null;
      }
    },
    reset() {
      figure = { disconnects: 0, resyncs: 0, longestGapMs: null, ended: false };
      downAt = null;
    },
    figure: () => ({ ...figure }),
  };
}

/** Reads an SSE response and hands on its status, resync and end. */
async function readSse(url: string, token: string, signal: AbortSignal, on: (e: StreamSeen) => void): Promise<void> {
  try {
    const res = await fetch(url, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
      signal,
    });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const name = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (name === 'status' && data)
          on({ type: 'status', connected: (JSON.parse(data) as { connected: boolean }).connected });
        if (name === 'resync') on({ type: 'resync' });
      }
    }
  } catch {
    /* aborted at the end */
  }
  if (!signal.aborted) on({ type: 'ended' });
}

/** The report as a table for a terminal. */
export function formatFailoverReport(r: FailoverReport): string {
  const count = (c: Count) => `${c.failed}/${c.ok + c.failed}`;
  const stream = (s: StreamFigure) =>
    `${s.disconnects} down, ${s.resyncs} resync, gap ${s.longestGapMs === null ? '—' : `${s.longestGapMs} ms`}${s.ended ? ', ENDED' : ''}`;
  const lines = [
    `failover drill: two brokers, ${r.links} link objects per platform, ${r.seconds} s`,
    '  fault          failed reads     failed writes     unknown outcomes         keyed lost/dup   takeover   SSE / hub',
    '                 cached   live    unkeyed  keyed    unkeyed keyed not-in-flight',
    ...r.rows.map(
      (x) =>
        `  ${x.fault.padEnd(14)} ${count(x.cached).padEnd(8)} ${count(x.live).padEnd(7)} ` +
        `${count(x.unkeyed).padEnd(8)} ${count(x.keyed).padEnd(8)} ${String(x.unkeyed.unknown).padEnd(7)} ${String(x.keyed.unknown).padEnd(5)} ` +
        `${String(x.unknownNotInFlight).padEnd(13)} ${`${x.keyed.lost}/${x.keyed.duplicated}`.padEnd(16)} ` +
        `${(x.takeoverMs === null ? '—' : `${x.takeoverMs} ms`).padEnd(10)} ${stream(x.sse)} / ${stream(x.hub)}`,
    ),
    `  connection resets over the whole run: ${r.rows[0]?.resets ?? 0}`,
  ];
  return lines.join('\n');
}

/** Whether a run met the issue's bar: nothing failed on a rolling restart or a standby's loss, reads never failed, nothing lost. */
export function failoverVerdict(r: FailoverReport): string[] {
  const problems: string[] = [];
  for (const x of r.rows) {
    if (x.cached.failed + x.live.failed > 0)
      problems.push(`${x.fault}: ${x.cached.failed + x.live.failed} reads failed`);
    if (x.keyed.lost + x.keyed.duplicated > 0)
      problems.push(`${x.fault}: keyed writes lost ${x.keyed.lost}, duplicated ${x.keyed.duplicated}`);
    if (x.unknownNotInFlight > 0)
      problems.push(`${x.fault}: ${x.unknownNotInFlight} unknown outcomes of writes not in flight on the lost broker`);
    if (
      (x.fault === 'rolling' || x.fault === 'standby-loss') &&
      x.unkeyed.failed + x.keyed.failed + x.unkeyed.unknown + x.keyed.unknown > 0
    ) {
      problems.push(
        `${x.fault}: ${x.unkeyed.failed + x.keyed.failed} writes failed, ${x.unkeyed.unknown + x.keyed.unknown} unknown`,
      );
    }
    if ((x.fault === 'kill' || x.fault === 'stop') && (x.takeoverMs === null || x.takeoverMs > 2000))
      problems.push(`${x.fault}: takeover ${x.takeoverMs ?? 'never'} ms`);
    if (x.sse.ended || x.hub.ended) problems.push(`${x.fault}: a stream ended`);
  }
  return problems;
}
