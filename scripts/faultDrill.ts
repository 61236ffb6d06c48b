/**
 * The fault drill: writes under Idempotency-Keys through the whole stack while faults are injected one after the
 * other, then counts lost and duplicated writes against the trading server's own accounts. `npm run drill` runs it
 * at length (scripts/drill.ts); test/e2e/drill.test.ts runs a short one.
 *
 * Each write is one account creation with its own key and a name no other write uses, repeated with the same key the
 * way a careful client does until the answer is final: the account (success), a platform refusal, or "the outcome
 * cannot be known". Afterwards every name is looked up on the trading server:
 * - duplicated: more than one account under one key's name (the gateway's promise is at most one);
 * - lost: a write answered with an account that the server does not have, or not under that login;
 * - unknown: writes whose outcome the gateway says can never be known, with how many the server did apply;
 * - unresolved: writes still without a final answer when the drill stopped waiting.
 * Recovery per fault is the time from the end of the fault to the first write sent after it that succeeds.
 */
import { startStack, type Stack } from './stack.js';

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
  const stack = options.stack ?? await startStack({ seed: 7 });
  try {
    const token = await stack.token();
    const base = `${stack.edgeUrl}/api/v2/PF4/${stack.platforms.pf4}`;
    const auth = { authorization: `Bearer ${token}` };
    const run = Date.now().toString(36);
    const group = await firstGroup(base, auth);
    const writes: Write[] = [];
    let resets = 0;
    let serial = 0;

    const newWrite = (): Write => {
      const w: Write = { key: `drill-${run}-${serial}`, name: `Drill ${run} ${serial}`, final: null, login: null, attempts: 0 };
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
        body = await res.json() as typeof body;
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
      if (error.code === 'PF4Error' || error.code === 'NotFound' || error.code === 'Forbidden' || error.code === 'Validation') return 'refused';
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
    await sleep(calmMs);
    for (const fault of options.faults ?? ALL_FAULTS) {
      log(`fault ${fault}`);
      const faultStart = Date.now();
      await inject(stack, fault, faultMs);
      const lastedMs = Date.now() - faultStart;
      const recoveryMs = await recovery();
      figures.push({ fault, lastedMs, recoveryMs });
      log(`  lasted ${lastedMs} ms, recovered in ${recoveryMs === null ? 'never' : `${recoveryMs} ms`}`);
      await sleep(calmMs);
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

async function firstGroup(base: string, auth: Record<string, string>): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const body = await (await fetch(`${base}/UsersRequest?limit=1`, { headers: auth })).json() as { data: Array<{ group: string }> | null };
    if (body.data?.[0]) return body.data[0].group;
    await sleep(100);
  }
  throw new Error('no account to take a group from');
}

async function serverAccounts(base: string, auth: Record<string, string>): Promise<Array<{ login: number; name: string }>> {
  for (let i = 0; i < 100; i++) {
    const body = await (await fetch(`${base}/UsersRequest?requestTimeout=30`, { headers: auth })).json() as {
      data: Array<{ login: number; name: string }> | null;
    };
    if (body.data) return body.data;
    await sleep(200);
  }
  throw new Error('could not read the trading server\'s accounts');
}

/** The report as lines for a terminal. */
export function formatDrillReport(r: DrillReport): string {
  const lines = [
    `fault drill: ${r.writes} writes (${r.attempts} attempts) in ${r.seconds} s`,
    `  lost ${r.lost}   duplicated ${r.duplicated}   connection resets ${r.resets}`,
    `  succeeded ${r.succeeded}   refused ${r.refused}   outcome unknown ${r.unknown.writes} (applied on the server: ${r.unknown.applied})   unresolved ${r.unresolved}`,
    '  fault            lasted ms   recovery ms (from the end of the fault to the next successful write)',
    ...r.faults.map((f) => `  ${f.fault.padEnd(16)} ${String(f.lastedMs).padStart(9)}   ${f.recoveryMs === null ? 'not recovered' : String(f.recoveryMs).padStart(11)}`),
  ];
  return lines.join('\n');
}
