/**
 * The fault drill: writes under Idempotency-Keys through the whole stack while faults are injected one after the
 * other, then counts lost and duplicated writes against the trading server's own accounts. `npm run drill` runs it
 * at length (bench/drill.ts); test/e2e/drill.test.ts runs a short one.
 *
 * Each write is one account creation with its own key and a name no other write uses, repeated with the same key the
 * way a careful client does until the answer is final: the account (success), a platform refusal, or "the outcome
 * cannot be known". Afterwards every name is looked up on the trading server:
 * - duplicated: more than one account under one key's name (the gateway's promise is at most one);
 * - lost: a write answered with an account that the server does not have, or not under that login;
 * - unknown: writes whose outcome the gateway says can never be known, with how many the server did apply;
 * - unresolved: writes still without a final answer when the drill stopped waiting.
 * Recovery per fault is the time from the end of the fault to the first write sent after it that succeeds.
 *
 * Health accuracy per fault: while the fault lasts and in the calm after recovery, `/healthz` is sampled both without
 * a token (the tiers: status, broker, platforms as a whole) and with the drill's token (each of its platforms); a
 * sample is right when both say what the fault means (see `expectedHealth`), and after recovery everything is up.
 */
import { startStack, type Stack } from '../launcher/stack.js';
import { valueText } from '../shared/valueText.js';

export interface DrillOptions {
  /** Concurrent writers. */
  writers?: number;
  /** How long each fault lasts, in ms (an instantaneous fault, like a drop, is injected once). */
  faultMs?: number;
  /** Calm time before the first fault and between recovery and the next fault. */
  calmMs?: number;
  /** The time budget of each write (seconds, `requestTimeout`). */
  writeSeconds?: number;
  /** How long writes may keep retrying after the last fault to reach a final answer. */
  settleMs?: number;
  /** Which faults, in order (default: all). */
  faults?: FaultName[];
  /** Progress lines (default: none). */
  log?: (line: string) => void;
  /** A running stack to drill; default: a fresh one, stopped at the end. */
  stack?: Stack;
}

export type FaultName = 'drop' | 'delay' | 'refuse-login' | 'sim-restart' | 'broker-kill';
export const ALL_FAULTS: FaultName[] = ['drop', 'delay', 'refuse-login', 'sim-restart', 'broker-kill'];

export interface FaultFigure {
  fault: FaultName;
  /** How long the fault lasted (ms). */
  lastedMs: number;
  /** From the end of the fault to the first successful write sent after it (ms); null: not within the bound. */
  recoveryMs: number | null;
  /** /healthz while the fault lasted (null: an instantaneous fault) and in the calm after recovery. */
  health: { during: HealthFigure | null; after: HealthFigure };
}

/** How often `/healthz` told the truth in one phase of a fault. */
export interface HealthFigure {
  /** What a right answer is, e.g. `503 broker down, PF4 unknown, PF5 unknown`. */
  expected: string;
  /** Samples taken (each an anonymous and an authenticated `/healthz`), and how many were right. */
  samples: number;
  right: number;
  /** From the start of the phase to the first right sample (ms); null: none was right. */
  firstRightMs: number | null;
  /** A few wrong answers, as seen. */
  wrong: string[];
}

export interface DrillReport {
  writes: number;
  succeeded: number;
  refused: number;
  /** Final "cannot be known" answers, and how many of those the server did apply. */
  unknown: { writes: number; applied: number };
  unresolved: number;
  lost: number;
  duplicated: number;
  /** Requests that got no HTTP answer at all (a reset connection): the gateway should answer every call. */
  resets: number;
  /** Attempts in total, retries included. */
  attempts: number;
  faults: FaultFigure[];
  seconds: number;
}

type Final = 'succeeded' | 'refused' | 'unknown';

interface Write {
  key: string;
  name: string;
  final: Final | null;
  login: number | null;
  attempts: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const RECOVERY_BOUND_MS = 60_000;
const SIM = 'demo-pf4';

export async function runFaultDrill(options: DrillOptions = {}): Promise<DrillReport> {
  const writers = options.writers ?? 8;
  const faultMs = options.faultMs ?? 3000;
  const calmMs = options.calmMs ?? 2000;
  const writeSeconds = options.writeSeconds ?? 2;
  const settleMs = options.settleMs ?? 30_000;
  const log = options.log ?? (() => {});
  const started = Date.now();
  const own = !options.stack;
  const stack = options.stack ?? (await startStack({ seed: 7 }));
  try {
    const token = await stack.token();
    const base = `${stack.edgeUrl}/api/v2/PF4/${stack.platforms.pf4}`;
    const auth = { authorization: `Bearer ${token}` };
    const run = Date.now().toString(36);
    const { group } = await firstAccount(base, auth);
    const writes: Write[] = [];
    let resets = 0;
    let serial = 0;

    const newWrite = (): Write => {
      const w: Write = {
        key: `drill-${run}-${serial}`,
        name: `Drill ${run} ${serial}`,
        final: null,
        login: null,
        attempts: 0,
      };
      serial++;
      writes.push(w);
      return w;
    };

    /** One attempt; null while the answer is not final. */
    const attempt = async (w: Write): Promise<Final | null> => {
      w.attempts++;
      let res: Response;
      let body: { data?: { login?: number } | null; error?: { code: string; message: string } | null };
      try {
        res = await fetch(`${base}/UserRecordNew?requestTimeout=${writeSeconds}`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': w.key },
          body: JSON.stringify({ group, name: w.name }),
        });
        body = (await res.json()) as typeof body;
      } catch {
        resets++;
        return null;
      }
      if (res.status === 429) {
        await sleep(1000 * (Number(res.headers.get('retry-after')) || 1));
        return null;
      }
      if (body.error === null && body.data) {
        w.login = body.data.login ?? null;
        return 'succeeded';
      }
      const error = body.error;
      if (!error) return null;
      if (/cannot be known/.test(error.message)) return 'unknown';
      if (
        error.code === 'PF4Error' ||
        error.code === 'NotFound' ||
        error.code === 'Forbidden' ||
        error.code === 'Validation'
      )
        return 'refused';
      return null; // not sent, timed out, in progress, a link lost: repeat under the same key
    };

    const settle = async (w: Write, until: number): Promise<void> => {
      while (w.final === null && Date.now() < until) {
        w.final = await attempt(w);
        if (w.final === null) await sleep(200);
      }
    };

    // Writers: one write at a time each, retried until final; new writes stop when the faults are over.
    let writing = true;
    const writerLoops = Array.from({ length: writers }, async () => {
      while (writing) await settle(newWrite(), Date.now() + RECOVERY_BOUND_MS);
    });

    const background: Array<Promise<void>> = [];
    /** From now, the time until a fresh write succeeds. */
    const recovery = async (): Promise<number | null> => {
      const from = Date.now();
      while (Date.now() - from < RECOVERY_BOUND_MS) {
        const w = newWrite();
        w.final = await attempt(w);
        if (w.final === 'succeeded') return Date.now() - from;
        // Left to settle with the rest, so it is counted like any other write.
        if (w.final === null) background.push(settle(w, Date.now() + settleMs));
        await sleep(50);
      }
      return null;
    };

    const figures: FaultFigure[] = [];
    const health = (expected: ExpectedHealth) => sampleHealth(stack, token, expected);
    await sleep(calmMs);
    for (const fault of options.faults ?? ALL_FAULTS) {
      log(`fault ${fault}`);
      const faultStart = Date.now();
      const duringExpected = expectedHealth(fault);
      const during = duringExpected ? health(duringExpected) : null;
      await inject(stack, fault, faultMs);
      const lastedMs = Date.now() - faultStart;
      const duringFigure = during ? await during.stop() : null;
      const recoveryMs = await recovery();
      const after = health(ALL_UP);
      await sleep(calmMs);
      const afterFigure = await after.stop();
      figures.push({ fault, lastedMs, recoveryMs, health: { during: duringFigure, after: afterFigure } });
      log(
        `  lasted ${lastedMs} ms, recovered in ${recoveryMs === null ? 'never' : `${recoveryMs} ms`}; ` +
          `health right ${duringFigure ? `${duringFigure.right}/${duringFigure.samples} during, ` : ''}` +
          `${afterFigure.right}/${afterFigure.samples} after`,
      );
    }
    writing = false;
    log('settling the writes in flight');
    const until = Date.now() + settleMs;
    await Promise.all([...writerLoops, ...background]);
    await Promise.all(writes.filter((w) => w.final === null).map((w) => settle(w, until)));

    // The trading server's own accounts, read live.
    const accounts = await serverAccounts(base, auth);
    const byName = new Map<string, number[]>();
    for (const a of accounts) byName.set(a.name, [...(byName.get(a.name) ?? []), a.login]);
    let lost = 0;
    let duplicated = 0;
    let unknownApplied = 0;
    for (const w of writes) {
      const logins = byName.get(w.name) ?? [];
      if (logins.length > 1) duplicated += logins.length - 1;
      if (w.final === 'succeeded' && (w.login === null || !logins.includes(w.login))) lost++;
      if (w.final === 'unknown' && logins.length > 0) unknownApplied++;
    }
    return {
      writes: writes.length,
      succeeded: writes.filter((w) => w.final === 'succeeded').length,
      refused: writes.filter((w) => w.final === 'refused').length,
      unknown: { writes: writes.filter((w) => w.final === 'unknown').length, applied: unknownApplied },
      unresolved: writes.filter((w) => w.final === null).length,
      lost,
      duplicated,
      resets,
      attempts: writes.reduce((n, w) => n + w.attempts, 0),
      faults: figures,
      seconds: Math.round((Date.now() - started) / 100) / 10,
    };
  } finally {
    await stack.control(SIM, 'delay', { ms: 0 }).catch(() => {});
    await stack.control(SIM, 'refuse-login', { on: false }).catch(() => {});
    if (own) await stack.close();
  }
}

/** Injects one fault and returns when it is over (the stack serves again from its side). */
async function inject(stack: Stack, fault: FaultName, faultMs: number): Promise<void> {
  switch (fault) {
    case 'drop':
      // Every manager connection closed at once, answers in flight included.
      await stack.control(SIM, 'drop');
      return;
    case 'delay':
      // Creates answered later than their budget: the first answers are time-outs of unknown outcome.
      await stack.control(SIM, 'delay', { ms: 3000, cmd: 'UserRecordNew' });
      await sleep(faultMs);
      await stack.control(SIM, 'delay', { ms: 0 });
      return;
    case 'refuse-login':
      await stack.control(SIM, 'refuse-login', { on: true });
      await stack.control(SIM, 'drop');
      await sleep(faultMs);
      await stack.control(SIM, 'refuse-login', { on: false });
      return;
    case 'sim-restart':
      await stack.control(SIM, 'restart', { downMs: faultMs });
      await sleep(faultMs);
      return;
    case 'broker-kill':
      stack.broker.child.kill('SIGKILL');
      await sleep(faultMs);
      await stack.restartBroker();
      return;
  }
}

/** What `/healthz` should say: the HTTP status, the broker tier, and each demo platform's state. */
export interface ExpectedHealth {
  status: 200 | 503;
  broker: 'up' | 'down';
  pf4: PlatformHealth;
  pf5: PlatformHealth;
}
type PlatformHealth = 'up' | 'down' | 'unknown';

const ALL_UP: ExpectedHealth = { status: 200, broker: 'up', pf4: 'up', pf5: 'up' };

/**
 * The truth while a fault lasts. Only the PF4 server is faulted: a refused login or a restarting server takes its
 * manager session down and leaves PF5's up; a killed broker leaves both platforms' states unknown; late answers to
 * creates leave every session up. A drop is over before a sample could be taken (null).
 */
export function expectedHealth(fault: FaultName): ExpectedHealth | null {
  switch (fault) {
    case 'drop':
      return null;
    case 'delay':
      return ALL_UP;
    case 'refuse-login':
    case 'sim-restart':
      return { status: 503, broker: 'up', pf4: 'down', pf5: 'up' };
    case 'broker-kill':
      return { status: 503, broker: 'down', pf4: 'unknown', pf5: 'unknown' };
  }
}

const describeHealth = (h: ExpectedHealth) => `${h.status}: broker ${h.broker}, PF4 ${h.pf4}, PF5 ${h.pf5}`;
const HEALTH_EVERY_MS = 100;

/**
 * Samples `/healthz` until stopped: each sample is one anonymous and one authenticated request, right when the
 * anonymous one has the expected status, broker tier and platforms tier (down when any platform is not up) and the
 * authenticated one the expected status and state of each demo platform. A sample still in flight when the phase
 * ends is not counted (it straddles two states).
 */
function sampleHealth(stack: Stack, token: string, expected: ExpectedHealth): { stop(): Promise<HealthFigure> } {
  const started = Date.now();
  const figure: HealthFigure = {
    expected: describeHealth(expected),
    samples: 0,
    right: 0,
    firstRightMs: null,
    wrong: [],
  };
  const tier = expected.pf4 === 'up' && expected.pf5 === 'up' ? 'up' : 'down';
  let running = true;
  const probe = async (): Promise<string | null> => {
    const get = (headers: Record<string, string>) =>
      fetch(`${stack.edgeUrl}/healthz`, { headers }).then(async (res) => ({
        status: res.status,
        body: (await res.json()) as { broker?: string; platforms?: unknown },
      }));
    const [anonymous, authenticated] = await Promise.all([get({}), get({ authorization: `Bearer ${token}` })]);
    const platforms = (authenticated.body.platforms ?? {}) as Record<string, string>;
    const seen =
      `anonymous ${anonymous.status} broker ${anonymous.body.broker} platforms ${valueText(anonymous.body.platforms)}; ` +
      `authenticated ${authenticated.status} PF4 ${platforms[stack.platforms.pf4]} PF5 ${platforms[stack.platforms.pf5]}`;
    const right =
      anonymous.status === expected.status &&
      anonymous.body.broker === expected.broker &&
      anonymous.body.platforms === tier &&
      authenticated.status === expected.status &&
      platforms[stack.platforms.pf4] === expected.pf4 &&
      platforms[stack.platforms.pf5] === expected.pf5;
    return right ? null : seen;
  };
  const loop = (async () => {
    while (running) {
      const at = Date.now();
      const wrong = await probe().catch((error: Error) => `no answer: ${error.message}`);
      if (!running) break;
      figure.samples++;
      if (wrong === null) {
        figure.right++;
        figure.firstRightMs ??= at - started;
      } else if (figure.wrong.length < 3) figure.wrong.push(wrong);
      await sleep(HEALTH_EVERY_MS);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return figure;
    },
  };
}

/** The demo platform's first account (its login and group), once the broker's cache holds one. */
export async function firstAccount(
  base: string,
  auth: Record<string, string>,
): Promise<{ login: number; group: string }> {
  for (let i = 0; i < 100; i++) {
    const body = (await (await fetch(`${base}/UsersRequest?limit=1`, { headers: auth })).json()) as {
      data: Array<{ login: number; group: string }> | null;
    };
    if (body.data?.[0]) return body.data[0];
    await sleep(100);
  }
  throw new Error('no account to take a group from');
}

/** Every account of the trading server, read live: the truth writes are checked against. */
export async function serverAccounts(
  base: string,
  auth: Record<string, string>,
): Promise<Array<{ login: number; name: string }>> {
  for (let i = 0; i < 100; i++) {
    const body = (await (await fetch(`${base}/UsersRequest?requestTimeout=30`, { headers: auth })).json()) as {
      data: Array<{ login: number; name: string }> | null;
    };
    if (body.data) return body.data;
    await sleep(200);
  }
  throw new Error("could not read the trading server's accounts");
}

/** The report as lines for a terminal. */
export function formatDrillReport(r: DrillReport): string {
  const lines = [
    `fault drill: ${r.writes} writes (${r.attempts} attempts) in ${r.seconds} s`,
    `  lost ${r.lost}   duplicated ${r.duplicated}   connection resets ${r.resets}`,
    `  succeeded ${r.succeeded}   refused ${r.refused}   outcome unknown ${r.unknown.writes} (applied on the server: ${r.unknown.applied})   unresolved ${r.unresolved}`,
    '  fault            lasted ms   recovery ms (from the end of the fault to the next successful write)',
    ...r.faults.map(
      (f) =>
        `  ${f.fault.padEnd(16)} ${String(f.lastedMs).padStart(9)}   ${f.recoveryMs === null ? 'not recovered' : String(f.recoveryMs).padStart(11)}`,
    ),
    '  health accuracy: /healthz samples saying the truth (each an anonymous and an authenticated request)',
    '  fault            expected during the fault                   during                         after recovery (200, all up)',
    ...r.faults.map(
      (f) =>
        `  ${f.fault.padEnd(16)} ${(f.health.during?.expected ?? '—').padEnd(43)} ` +
        `${healthCell(f.health.during).padEnd(30)} ${healthCell(f.health.after)}`,
    ),
  ];
  const wrong = r.faults.flatMap((f) => [
    ...(f.health.during?.wrong ?? []).map((w) => `  ${f.fault} during: ${w}`),
    ...f.health.after.wrong.map((w) => `  ${f.fault} after: ${w}`),
  ]);
  if (wrong.length) lines.push('  wrong health answers (first few per phase):', ...wrong);
  return lines.join('\n');
}

function healthCell(h: HealthFigure | null): string {
  if (!h) return '— (instantaneous)';
  if (!h.samples) return 'no sample';
  const first = h.firstRightMs === null ? 'never right' : h.firstRightMs > 0 ? `right from ${h.firstRightMs} ms` : '';
  return `${h.right}/${h.samples} ${Math.round((100 * h.right) / h.samples)}%${first ? `, ${first}` : ''}`;
}
