/**
 * `npm run bench:regions`: the gateway's regions simulated on one machine (docs/regions.md). The whole stack runs
 * (simulator, broker, edge in workerd) with the platform's home in `weur` and callers in every region of
 * `REGIONS_DELAYS` (default `weur=5,enam=40,apac=150,oc=170`: region=one-way delay in ms, the home first). Each region's
 * objects reach the broker through a delay proxy of its own (bench/delayProxy.ts) holding every chunk for that
 * region's one-way delay, configured as the edge's `REGION_BROKER_ROUTES`; callers name their region in
 * `X-Gateway-Region`, which a local edge believes.
 *
 * Per region it measures:
 * - cached read: `UserRecordGet` of one account, `REGIONS_READS` times (default 300), answered by the region's link
 *   object (the bench counts how many its replica answered); in the same rounds an open trade (`TradeRecordGet`) and
 *   a page of 100 open trades (`TradesGet` with a cursor), also counted;
 * - live read: `UserRecordRequest` of the same account, `REGIONS_READS` / 3 times;
 * - write: `UserRecordUpdate` of the account (its name), `REGIONS_WRITES` times (default 30);
 * - read your write: `REGIONS_POSITION_TRIES` times (default 1,000), a write of the region's own account and at once a
 *   cached read sending the write's `X-Gateway-Position`; the read's time, and how many reads missed the write
 *   (stale: must be 0), every region at once;
 * - freshness: a change made on the trading server by a manager session of the bench's own (the account's name) until
 *   the region's cached read shows it, `REGIONS_CHANGES` times (default 300), every region polling at once with a pause
 *   of `REGIONS_POLL_MS` (default 2) between its reads (on one machine every region's objects share workerd's one
 *   thread: reads back to back would hold up the change stream they wait for);
 * - tick delay: for `REGIONS_TICK_SECONDS` (default 5) each region's SSE client, the tick's time at the simulator
 *   (`lastTime`) to the client's receipt.
 * Reads and writes go region after region in rounds, so the machine's noise falls on each alike; the proxies run in a
 * process of their own, so the bench's clients do not hold up their timers. Each figure also as a ratio to the home
 * region's, then one summary line.
 *
 * `REGIONS_WORLD=scale` runs it all on the scale world (`SCALE_ACCOUNTS`, default 100,000 accounts, and
 * `SCALE_TRADES`, default 200,000 open trades, on the demo PF4 server): the replicas then keep the accounts and trades
 * in their objects' storage, and the bench says which tables each region's replica stores.
 *
 * What it cannot show: on one machine every object runs in the same workerd, so a call from a far region's edge to
 * the home's objects (a live read, a write) crosses no delay here. In a deployment it crosses the region's round trip
 * to the home once more. The figures of those columns are the home path's.
 */
import { randomBytes } from 'node:crypto';
import { objectCall } from '../launcher/edge.js';
import { DEMO_MANAGER_LOGIN, DEMO_PF4_SERVER } from '../launcher/demo.js';
import { startStack } from '../launcher/stack.js';
import { isEntryModule } from '../shared/entryModule.js';
import { isRegion, type Region } from '../shared/regions.js';
import { DEFAULT_LINKS_PER_PLATFORM, pickLink } from '../workers/gateway/names.js';
import { encodeCursor } from '../workers/gateway/edgeReplica.js';
import { defaultConfig } from '../sim/config/simConfig.js';
import { ManagerClient } from '../test/support/sim/managerClient.js';
import { freePort, spawnDelayProxies } from './delayProxy.js';
import { percentile, sortedOf } from './measure.js';

/** The regions and their one-way delays, the home first. */
export function parseDelays(raw: string): Array<{ region: Region; delayMs: number }> {
  const entries = raw
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((entry) => {
      const [region, ms] = entry.split('=');
      const delayMs = Number(ms);
      if (!isRegion(region) || !Number.isFinite(delayMs) || delayMs < 0 || delayMs > 2000)
        throw new Error(`REGIONS_DELAYS: ${entry} is not region=milliseconds (a region, 0 to 2000 ms)`);
      return { region, delayMs };
    });
  if (entries.length < 1) throw new Error('REGIONS_DELAYS: name at least the home region');
  if (new Set(entries.map((e) => e.region)).size !== entries.length)
    throw new Error('REGIONS_DELAYS: names a region twice');
  return entries;
}

const count = (name: string, fallback: number, min = 1) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be a whole number of at least ${min}`);
  return value;
};

interface Figures {
  cached: number[];
  /** Cached reads of one open trade (TradeRecordGet) and of a page of 100 (TradesGet), in the same rounds. */
  tradeRecord: number[];
  tradePage: number[];
  /** The tables the region's replica keeps in its object's storage, and their rows. */
  stored: string[];
  /** Cached reads sending the position of the write just before them. */
  afterWrite: number[];
  /** Of those, the reads that did not show the write. */
  stale: number;
  /** Of those, the writes whose answer named no position. */
  unpositioned: number;
  cachedAtReplica: number;
  live: number[];
  write: number[];
  fresh: number[];
  ticks: number[];
}

const ms = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : '-');
const p = (values: number[], q: number) => percentile(sortedOf(values), q);
/** A replica's time to come in sync and the reads answered meanwhile. */
const warmed = (w: { ms: number; reads: number[]; failed: number }) =>
  `${(w.ms / 1000).toFixed(1)} s, ${w.reads.length} reads ${ms(p(w.reads, 0.5))}/${ms(Math.max(...w.reads))} ms (${w.failed})`;

async function main(): Promise<void> {
  const delays = parseDelays(process.env.REGIONS_DELAYS ?? 'weur=5,enam=40,apac=150,oc=170');
  const READS = count('REGIONS_READS', 300);
  const WRITES = count('REGIONS_WRITES', 30);
  const CHANGES = count('REGIONS_CHANGES', 300);
  const TICK_SECONDS = count('REGIONS_TICK_SECONDS', 5);
  const TRIES = count('REGIONS_POSITION_TRIES', 1000);
  const POLL_MS = count('REGIONS_POLL_MS', 2);
  const WORLD = process.env.REGIONS_WORLD ?? 'demo';
  if (WORLD !== 'demo' && WORLD !== 'scale') throw new Error('REGIONS_WORLD must be demo or scale');
  const scale = WORLD === 'scale';
  const SCALE_ACCOUNTS = count('SCALE_ACCOUNTS', 100_000);
  const SCALE_TRADES = count('SCALE_TRADES', 200_000);
  const WARM_MS = scale ? 900_000 : 30_000;
  const home = delays[0].region;
  const progress = (line: string) => process.stderr.write(`${line}\n`);

  const brokerPort = await freePort();
  const brokerUrl = `http://127.0.0.1:${brokerPort}`;
  const proxies = await spawnDelayProxies(
    brokerUrl,
    delays.map((d) => d.delayMs),
  );
  const routes = Object.fromEntries(delays.map(({ region }, i) => [region, { [brokerUrl]: proxies.urls[i] }]));
  progress(
    `bench:regions: starting the stack, home ${home}, ${delays.map((d) => `${d.region} ${d.delayMs} ms`).join(', ')}`,
  );
  // The scale world: the demo PF4 server with the accounts and open trades of a broker of real size.
  const managerPassword = (process.env.SIM_MANAGER_PASSWORD ??= randomBytes(18).toString('base64url'));
  const world = scale
    ? {
        simConfig: {
          servers: defaultConfig(managerPassword).servers.map((server) => ({
            ...server,
            ticksPerSecond: 20,
            ...(server.name === DEMO_PF4_SERVER ? { accounts: SCALE_ACCOUNTS, trades: SCALE_TRADES } : {}),
          })),
        },
      }
    : { ticksPerSecond: 20 };
  if (scale) progress(`bench:regions: the scale world, ${SCALE_ACCOUNTS} accounts and ${SCALE_TRADES} open trades`);
  const stack = await startStack({
    brokerPort,
    ...world,
    edgeVars: { REGION_BROKER_ROUTES: JSON.stringify(routes), HOME_REGION: home, EDGE_REGION: home },
    log: () => {},
  });
  const manager = await ManagerClient.connect(stack.sim.port, DEMO_PF4_SERVER);
  try {
    const password = managerPassword;
    await manager.ok('login', { login: DEMO_MANAGER_LOGIN, password, pump: false });
    const token = await stack.token();
    const platform = stack.platforms.pf4;
    const v2 = `${stack.edgeUrl}/api/v2/PF4/${platform}`;
    const answer = async (
      region: Region,
      path: string,
      init: RequestInit & { trace?: string; position?: string | null } = {},
    ) => {
      const traceId = init.trace ?? randomBytes(16).toString('hex');
      const res = await fetch(`${v2}${path}`, {
        ...init,
        headers: {
          authorization: `Bearer ${token}`,
          'x-gateway-region': region,
          traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
          ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...(init.position ? { 'x-gateway-position': init.position } : {}),
        },
      });
      const body = (await res.json()) as { data: any; error: unknown };
      if (body.error !== null) throw new Error(`${path} from ${region}: ${JSON.stringify(body.error)}`);
      return { data: body.data, position: res.headers.get('x-gateway-position') };
    };
    const call = async (region: Region, path: string, init: RequestInit & { trace?: string } = {}) =>
      (await answer(region, path, init)).data;
    const accounts = (await call(home, `/UsersRequest?limit=${delays.length + 1}`)) as Array<{ login: number }>;
    if (accounts.length < delays.length + 1) throw new Error('the demo platform has too few accounts for the bench');
    const login = accounts[0].login;
    const record = `/UserRecordGet/${login}`;
    // An open trade, and a page of 100 open trades from the middle of the table (the cursor of the ticket before it).
    // The broker answers cached reads once its cache holds the world (a minute or more for the scale world).
    const startedAt = Date.now();
    let trades: Array<{ order: number }> | undefined;
    while (trades === undefined) {
      trades = (await call(home, '/TradesGet?limit=1000').catch((error: unknown) => {
        if (Date.now() - startedAt > WARM_MS) throw error;
        return undefined;
      })) as Array<{ order: number }> | undefined;
    }
    const ticket = trades[Math.floor(trades.length / 2)].order;
    const tradeRecord = `/TradeRecordGet/${ticket}`;
    const tradePage = `/TradesGet?limit=100&cursor=${encodeCursor(trades[Math.floor(trades.length / 3)].order)}`;

    // One trace per region: its link object's replica, warmed until it is in sync, answers the region's cached reads.
    const traces = new Map<Region, string>();
    const replicaOf = async (region: Region) => {
      const name = pickLink(platform, region, traces.get(region)!, DEFAULT_LINKS_PER_PLATFORM);
      const stats = await objectCall<{
        replica: {
          inSync: boolean;
          answered: number;
          snapshots: number;
          lost: number;
          tables: Record<string, number>;
          stored: string[];
        } | null;
      }>(stack.edge.miniflare, 'LINKS', name, 'stats');
      return stats.replica;
    };
    // How long each region's replica took to come in sync, and the reads answered meanwhile (by the broker, over
    // the link the snapshot came in on).
    const warming = new Map<Region, { ms: number; reads: number[]; failed: number }>();
    for (const { region } of delays) {
      traces.set(region, randomBytes(16).toString('hex'));
      const until = Date.now() + WARM_MS;
      const started = performance.now();
      const w = { ms: 0, reads: [] as number[], failed: 0 };
      warming.set(region, w);
      for (;;) {
        // A read may time out while a replica of the scale world takes its snapshot: it is asked again.
        const t = performance.now();
        const ok = await call(region, record, { trace: traces.get(region) }).then(
          () => true,
          () => false,
        );
        if (ok) w.reads.push(performance.now() - t);
        else w.failed++;
        w.ms = performance.now() - started;
        if ((await replicaOf(region))?.inSync) break;
        if (Date.now() > until) throw new Error(`the ${region} replica did not come in sync within ${WARM_MS} ms`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    progress('bench:regions: every region has a replica in sync');

    const figures = new Map<Region, Figures>();
    const before = new Map<Region, number>();
    for (const { region } of delays) {
      figures.set(region, {
        cached: [],
        afterWrite: [],
        stale: 0,
        unpositioned: 0,
        cachedAtReplica: 0,
        tradeRecord: [],
        tradePage: [],
        stored: [],
        live: [],
        write: [],
        fresh: [],
        ticks: [],
      });
      before.set(region, (await replicaOf(region))?.answered ?? 0);
    }
    // Region after region within each round, so the machine's noise falls on every region alike.
    const rounds = async (count: number, one: (region: Region, f: Figures, i: number) => Promise<void>) => {
      for (let i = 0; i < count; i++) for (const { region } of delays) await one(region, figures.get(region)!, i);
    };
    await rounds(READS, async (region, f) => {
      let t = performance.now();
      await call(region, record, { trace: traces.get(region) });
      f.cached.push(performance.now() - t);
      t = performance.now();
      const trade = (await call(region, tradeRecord, { trace: traces.get(region) })) as { order: number };
      f.tradeRecord.push(performance.now() - t);
      if (trade.order !== ticket) throw new Error(`${region}: TradeRecordGet answered ${trade.order}, not ${ticket}`);
      t = performance.now();
      const page = (await call(region, tradePage, { trace: traces.get(region) })) as unknown[];
      f.tradePage.push(performance.now() - t);
      if (page.length !== 100) throw new Error(`${region}: a page of ${page.length} trades, not 100`);
    });
    for (const { region } of delays) {
      const r = await replicaOf(region);
      const f = figures.get(region)!;
      f.cachedAtReplica = (r?.answered ?? 0) - before.get(region)!;
      f.stored = (r?.stored ?? []).map((t) => `${t} ${r!.tables[t]}`);
    }
    await rounds(Math.max(1, Math.round(READS / 3)), async (region, f) => {
      const t = performance.now();
      await call(region, `/UserRecordRequest/${login}`);
      f.live.push(performance.now() - t);
    });
    await rounds(WRITES, async (region, f, i) => {
      const t = performance.now();
      await call(region, `/UserRecordUpdate/${login}`, {
        method: 'POST',
        body: JSON.stringify({ name: `bench ${region} ${i}` }),
      });
      f.write.push(performance.now() - t);
    });
    progress('bench:regions: cached reads, live reads and writes measured');

    // Read your write: each region writes its own account and reads it back at once with the write's position.
    await Promise.all(
      delays.map(async ({ region }, r) => {
        const f = figures.get(region)!;
        const own = accounts[r + 1].login;
        // The region's warmed link object: a trace that picked a cold one would time its first link and snapshot.
        const trace = traces.get(region)!;
        for (let i = 0; i < TRIES; i++) {
          const name = `ryw ${region} ${i}`;
          const written = await answer(region, `/UserRecordUpdate/${own}`, {
            method: 'POST',
            body: JSON.stringify({ name }),
          });
          if (written.position === null) f.unpositioned++;
          const t = performance.now();
          const read = await answer(region, `/UserRecordGet/${own}`, { trace, position: written.position });
          f.afterWrite.push(performance.now() - t);
          if (read.data.name !== name) f.stale++;
        }
      }),
    );
    progress('bench:regions: reads of own writes measured');

    // Freshness: one change at a time on the trading server, every region polling its replica for it at once.
    for (let i = 0; i < CHANGES; i++) {
      const name = `fresh ${i} ${randomBytes(3).toString('hex')}`;
      const t = performance.now();
      const seen = delays.map(async ({ region }) => {
        const end = Date.now() + 10_000;
        while (Date.now() < end) {
          const data = await call(region, record, { trace: traces.get(region) });
          if (data.name === name) return figures.get(region)!.fresh.push(performance.now() - t);
          await new Promise((r) => setTimeout(r, POLL_MS));
        }
        throw new Error(`${region} did not see change ${i} within 10 s`);
      });
      await manager.ok('UserRecordUpdate', { login, record: { name } });
      await Promise.all(seen);
    }
    progress('bench:regions: freshness measured');
    for (const { region } of delays) {
      const r = await replicaOf(region);
      progress(`bench:regions: ${region}: replica in sync ${r?.inSync}, snapshots ${r?.snapshots}, lost ${r?.lost}`);
    }

    // Tick delay: an SSE client per region for TICK_SECONDS.
    await Promise.all(
      delays.map(async ({ region }) => {
        const abort = new AbortController();
        const res = await fetch(`${v2}/Stream?ticks=EURUSD,GBPUSD,USDJPY`, {
          headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'x-gateway-region': region },
          signal: abort.signal,
        });
        const reader = res.body!.getReader();
        const decoder = new TextDecoder();
        const started = Date.now();
        const stop = setTimeout(() => abort.abort(), TICK_SECONDS * 1000);
        let text = '';
        try {
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            const now = Date.now();
            text += decoder.decode(value, { stream: true });
            let cut: number;
            while ((cut = text.indexOf('\n\n')) >= 0) {
              const event = text.slice(0, cut);
              text = text.slice(cut + 2);
              const stamp = /"lastTime":"([^"]+)"/.exec(event)?.[1];
              // The first second is the stream object's subscription settling, not its steady state.
              if (stamp && event.includes('event: ticks') && now - started > 1000)
                figures.get(region)!.ticks.push(now - Date.parse(stamp));
            }
          }
        } catch (error) {
          if (!abort.signal.aborted) throw error;
        } finally {
          clearTimeout(stop);
        }
      }),
    );

    const h = figures.get(home)!;
    const ratio = (value: number, base: number) => (base > 0 ? `${(value / base).toFixed(2)}x` : '-');
    console.log(
      'region  delay | cached p50/p99 (x home) | at replica | own write read p50/p99, stale | live p50/p99 (x home) | write p50 | fresh p50/p99 (≤ delay+20) | tick p50/p99 (x home)',
    );
    const verdicts: string[] = [];
    for (const { region, delayMs } of delays) {
      const f = figures.get(region)!;
      const c50 = p(f.cached, 0.5);
      const c99 = p(f.cached, 0.99);
      const fresh99 = p(f.fresh, 0.99);
      console.log(
        [
          `${region.padEnd(6)} ${String(delayMs).padStart(4)} ms`,
          `${ms(c50)}/${ms(c99)} ms (${ratio(c50, p(h.cached, 0.5))}/${ratio(c99, p(h.cached, 0.99))})`,
          `${f.cachedAtReplica}/${3 * f.cached.length}`,
          `${ms(p(f.afterWrite, 0.5))}/${ms(p(f.afterWrite, 0.99))} ms, ${f.stale} stale of ${f.afterWrite.length}`,
          `${ms(p(f.live, 0.5))}/${ms(p(f.live, 0.99))} ms (${ratio(p(f.live, 0.5), p(h.live, 0.5))})`,
          `${ms(p(f.write, 0.5))} ms (${ratio(p(f.write, 0.5), p(h.write, 0.5))})`,
          `${ms(p(f.fresh, 0.5))}/${ms(fresh99)} ms (${fresh99 <= delayMs + 20 ? 'yes' : 'no'})`,
          `${ms(p(f.ticks, 0.5))}/${ms(p(f.ticks, 0.99))} ms (${ratio(p(f.ticks, 0.5), p(h.ticks, 0.5))})`,
        ].join(' | '),
      );
      if (c50 > 1.3 * p(h.cached, 0.5) || c99 > 1.3 * p(h.cached, 0.99)) verdicts.push(`${region} cached reads`);
      if (fresh99 > delayMs + 20) verdicts.push(`${region} freshness`);
      if (p(f.live, 0.5) > (2 * delayMs + p(h.live, 0.5)) * 1.1) verdicts.push(`${region} live reads`);
      if (f.cachedAtReplica !== 3 * f.cached.length) verdicts.push(`${region} reads past the replica`);
      if (scale && !(f.stored.some((t) => t.startsWith('users ')) && f.stored.some((t) => t.startsWith('trades '))))
        verdicts.push(`${region} accounts and trades not in the replica's storage`);
      if (f.stale > 0) verdicts.push(`${region} ${f.stale} reads missed their own write`);
      if (f.unpositioned > 0) verdicts.push(`${region} ${f.unpositioned} writes named no position`);
    }
    console.log(
      "region | trade record p50/p99 | page of 100 trades p50/p99 | tables in the replica's storage (rows) | in sync after, reads meanwhile p50/max (failed)",
    );
    for (const { region } of delays) {
      const f = figures.get(region)!;
      console.log(
        [
          region.padEnd(6),
          `${ms(p(f.tradeRecord, 0.5))}/${ms(p(f.tradeRecord, 0.99))} ms`,
          `${ms(p(f.tradePage, 0.5))}/${ms(p(f.tradePage, 0.99))} ms`,
          f.stored.length ? f.stored.join(', ') : 'none (every table in memory)',
          warmed(warming.get(region)!),
        ].join(' | '),
      );
    }
    console.log(
      verdicts.length === 0
        ? `bench:regions: cached reads within 1.3x of ${home}'s p50 and p99 in every region, all from the region's replica; every read sent its write's position saw the write (${TRIES} per region); freshness within each region's delay + 20 ms at p99`
        : `bench:regions: short of the marks: ${verdicts.join(', ')}`,
    );
  } finally {
    manager.close();
    await stack.close();
    await proxies.close();
  }
}

if (isEntryModule(import.meta.url)) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
