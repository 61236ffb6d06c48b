/**
 * Attack 3: a flood of invented client ids, 8 callers, from one address and then from a new address per request,
 * while another client's cached reads are timed on a thread of their own: latencies before and during, answers by
 * status, secrets verified (the edge's verification counter, read every second), counters spent by the invented ids,
 * workerd's CPU and memory, and the machine's CPU pressure.
 */
import { randomUUID } from 'node:crypto';
import { cpuPressureUs } from '../measure.js';
import { childProcessesNamed, usageOf } from '../processes.js';
import { tokenFrom } from './clients.js';
import { progress, type Drill } from './drill.js';
import { counterSpent, countLabels, ms, ratio, summarize, type CounterReading } from './figures.js';
import { getJson } from './http.js';
import { counter, failureCounter, failureShards, windowsBeganBy } from './rateLimits.js';
import { FAILURE_LIMIT, FAILURE_SHARDS, P50_BOUND, TOKEN_LIMIT, VERIFY_LIMIT, WINDOW_MS } from './settings.js';
import { startTimedReads } from './timedReads.js';
import { sleep } from './waiting.js';

/** The `n`th address of the distributed flood, counting through 198.18.0.0/15 (RFC 2544's benchmarking range). */
export function floodAddress(n: number): string {
  return `198.${18 + ((n >> 16) & 1)}.${(n >> 8) & 255}.${n & 255}`;
}

export async function attackFlood(drill: Drill): Promise<void> {
  const { stack, edgeUrl } = drill;
  progress('3: a flood of invented client ids while cached reads are timed');
  const reader = await stack.token();
  const users = await getJson(edgeUrl, `/api/v2/PF4/${stack.platforms.pf4}/UsersRequest?limit=1`, reader);
  const login = users.body.data[0].login as number;
  const readPath = `/api/v2/PF4/${stack.platforms.pf4}/UserRecordGet/${login}`;
  const readerThread = startTimedReads(`${edgeUrl}${readPath}`, reader);
  const verifyReadings: CounterReading[] = [await counter(stack, 'token-verify:all', VERIFY_LIMIT)];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      await sleep(1000);
      verifyReadings.push(await counter(stack, 'token-verify:all', VERIFY_LIMIT));
    }
  })();

  await sleep(1000); // warm
  const baseFrom = Date.now();
  await sleep(3000);
  const baseTo = Date.now();

  const invented: string[] = [];
  let addressSerial = 0;
  const sampledAddresses: string[] = [];
  const flood = async (label: string, durationMs: number, address: () => string) => {
    const statuses: string[] = [];
    const unknownMs: number[] = [];
    const usage = usageOf(childProcessesNamed('workerd'));
    const pressure = cpuPressureUs();
    const from = Date.now();
    const end = from + durationMs;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (Date.now() < end) {
          const id = `invented-${randomUUID()}`;
          if (invented.length < 20) invented.push(id);
          const t = performance.now();
          const answer = await tokenFrom(stack, address(), id, 'x').catch(() => ({ status: 0, body: {} }));
          statuses.push(String(answer.status || 'no answer'));
          if (answer.status === 401) unknownMs.push(performance.now() - t);
        }
      }),
    );
    const to = Date.now();
    const after = usageOf(childProcessesNamed('workerd'));
    const short = (cpuPressureUs() - pressure) / ((to - from) * 10);
    return {
      label,
      from,
      to,
      statuses,
      unknownMs,
      cpuPerSecond: (after.cpuSeconds - usage.cpuSeconds) / ((to - from) / 1000),
      rssBefore: usage.rssMb,
      rssAfter: after.rssMb,
      short,
    };
  };
  const oneSource = await flood('from one address (192.0.2.10), 5 s', 5000, () => '192.0.2.10');
  // Counters read at once after each flood; a reading counts only if its window began before the flood did.
  const oneAddress = await failureCounter(stack, (await failureShards(stack)).shardOf, '192.0.2.10');
  invented.length = 0;
  const manySources = await flood('from a new address per request (198.18.0.0/15), 10 s', 10_000, () => {
    const address = floodAddress(addressSerial++);
    if (sampledAddresses.length < 20) sampledAddresses.push(address);
    return address;
  });
  const shards = await failureShards(stack);
  const addressCounters = await Promise.all(sampledAddresses.map((a) => failureCounter(stack, shards.shardOf, a)));
  const inventedCounters = await Promise.all(invented.map((id) => counter(stack, `token:${id}`, TOKEN_LIMIT)));
  const sameWindow = (readings: CounterReading[], from: number) => windowsBeganBy(readings, from, WINDOW_MS);
  await sleep(1000);
  sampling = false;
  await sampler;
  const reads = await readerThread.stop();
  verifyReadings.push(await counter(stack, 'token-verify:all', VERIFY_LIMIT));

  const inPhase = (from: number, to: number) => reads.filter((r) => r.at > from && r.at <= to);
  const base = summarize(inPhase(baseFrom, baseTo).map((r) => r.ms));
  const verified = counterSpent(verifyReadings, VERIFY_LIMIT);
  const untouched = inventedCounters.filter((c) => c.left === TOKEN_LIMIT).length;
  const manyReadable = sameWindow([...addressCounters, ...inventedCounters], manySources.from);
  const oneReadable = sameWindow([oneAddress], oneSource.from);
  const failedReads = reads.filter((r) => !r.ok).length;
  const phaseLine = (p: Awaited<ReturnType<typeof flood>>) => {
    const during = summarize(inPhase(p.from, p.to).map((r) => r.ms));
    const unknown = summarize(p.unknownMs);
    return {
      during,
      text:
        `${p.label}: ${p.statuses.length} token requests (${Math.round(p.statuses.length / ((p.to - p.from) / 1000))}/s) answered ${countLabels(p.statuses)}, ` +
        `401s took p50 ${ms(unknown.p50)}; cached reads p50 ${ms(during.p50)} (${ratio(during.p50, base.p50)}), p99 ${ms(during.p99)} (${ratio(during.p99, base.p99)}), n ${during.n}; ` +
        `workerd CPU ${p.cpuPerSecond.toFixed(2)} s/s, RSS ${Math.round(p.rssBefore)} → ${Math.round(p.rssAfter)} MB; ` +
        `machine short of CPU ${Number.isNaN(p.short) ? 'not reported' : `${Math.round(p.short)} % of the time`}`,
    };
  };
  const a = phaseLine(oneSource);
  const b = phaseLine(manySources);
  const p50Held = (d: { p50: number | null }) => d.p50 !== null && base.p50 !== null && d.p50 <= P50_BOUND * base.p50;
  drill.found({
    id: '3a',
    title: `invented client ids from one address, 8 callers (bound: cached reads' p50 during at most ${P50_BOUND}× before)`,
    figures: `cached reads before: p50 ${ms(base.p50)}, p99 ${ms(base.p99)}, n ${base.n}. ${a.text}`,
    held: p50Held(a.during) && failedReads === 0,
  });
  // Beyond the finding (one source inventing ids): a distributed flood, a new address per request, each address
  // counted in one of the failure counter objects.
  drill.found({
    id: '3c',
    title: `invented client ids from a new address per request, 8 callers (bound: cached reads' p50 during at most ${P50_BOUND}× before)`,
    figures: `cached reads before: p50 ${ms(base.p50)}. ${b.text}`,
    held: p50Held(b.during) && failedReads === 0,
  });
  drill.found({
    id: '3b',
    title: 'what the invented ids cost',
    figures:
      `secrets verified (PBKDF2) during both floods: ${verified} (the edge's verification counter, ${verifyReadings.length} readings); ` +
      (manyReadable
        ? `token counters of ${untouched} of ${invented.length} invented ids sampled from the second flood untouched (${TOKEN_LIMIT} of ${TOKEN_LIMIT} left); ` +
          `${addressCounters.filter((c) => c.left === FAILURE_LIMIT - 1).length} of ${addressCounters.length} sampled addresses have a failure counter with 1 spent; `
        : 'the rate-limit window turned during the second flood: its counters not compared; ') +
      (oneReadable ? `192.0.2.10's failure counter ${oneAddress.left} of ${FAILURE_LIMIT} left; ` : '') +
      `failure counter objects: ${shards.objects} of TOKEN_FAILURE_SHARDS ${FAILURE_SHARDS} for ${addressSerial + 1} addresses, none per client id; cached reads failed: ${failedReads}`,
    held: verified === 0 && (!manyReadable || (untouched === invented.length && invented.length > 0)),
  });
}
