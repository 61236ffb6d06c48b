/**
 * Attack 0: a fresh data folder, polled from the first moment of the start as `npm start` starts the stack:
 * `/healthz` and `/connect/token` every 100 ms, answers counted by status (no listener yet, 503 RegistryNotReady,
 * 500, 200), and a token asked for as soon as `/healthz` first says 200.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { startStack } from '../../launcher/stack.js';
import type { Drill } from './drill.js';
import { countLabels, seconds } from './figures.js';
import { FORM, freePort, tokenForm } from './http.js';
import { sleep, until } from './waiting.js';

/**
 * Whether a polled start held: no 5xx but 503, every 503 either RegistryNotReady or `down`, and the token asked for
 * right after the first `/healthz` 200 issued.
 */
export function startupHeld(poll: Pick<StartupPoll, 'healthz' | 'token' | 'tokenAfterHealthy'>): boolean {
  const all = [...poll.healthz, ...poll.token, ...(poll.tokenAfterHealthy ? [poll.tokenAfterHealthy] : [])];
  return (
    !all.some((l) => l.startsWith('5') && !l.startsWith('503')) &&
    poll.tokenAfterHealthy === '200' &&
    all.filter((l) => l.startsWith('503')).every((l) => l === '503 RegistryNotReady' || l === '503 down')
  );
}

/** Why a start failed, from its error: the first two lines that say error or fail, without colours, at most 300 characters. */
export function startFailureCause(message: string): string {
  return stripVTControlCharacters(message)
    .split('\n')
    .filter((l) => /error|fail/i.test(l))
    .slice(0, 2)
    .join(' / ')
    .slice(0, 300);
}

interface StartupPoll {
  stop(): Promise<void>;
  healthz: string[];
  token: string[];
  firstHealthy: number | null;
  firstToken: number | null;
  tokenAfterHealthy: string | null;
}

function pollStartup(url: string, clientId: string, secret: string, t0: number): StartupPoll {
  const poll: StartupPoll = {
    stop: async () => {},
    healthz: [],
    token: [],
    firstHealthy: null,
    firstToken: null,
    tokenAfterHealthy: null,
  };
  const label = async (res: Response) => {
    const body = (await res.json().catch(() => ({}))) as { errorCode?: string; status?: string; error?: string };
    return res.status === 200 ? '200' : `${res.status} ${body.errorCode ?? body.status ?? body.error ?? ''}`.trim();
  };
  const noAnswer = () => 'no listener yet';
  let running = true;
  const loop = (async () => {
    while (running) {
      const healthz = fetch(`${url}/healthz`).then(label, noAnswer);
      const token =
        poll.firstToken === null
          ? fetch(`${url}/connect/token`, { method: 'POST', headers: FORM, body: tokenForm(clientId, secret) }).then(
              label,
              noAnswer,
            )
          : Promise.resolve(null);
      const [h, t] = await Promise.all([healthz, token]);
      poll.healthz.push(h);
      if (t !== null) {
        poll.token.push(t);
        if (t === '200') poll.firstToken = Date.now() - t0;
      }
      if (h === '200' && poll.firstHealthy === null) {
        poll.firstHealthy = Date.now() - t0;
        // What a script that waits for /healthz does next.
        poll.tokenAfterHealthy = await fetch(`${url}/connect/token`, {
          method: 'POST',
          headers: FORM,
          body: tokenForm(clientId, secret),
        }).then(label, noAnswer);
      }
      await sleep(100);
    }
  })();
  poll.stop = async () => {
    running = false;
    await loop;
  };
  return poll;
}

/** Polled starts, each on a fresh data folder: one sample says little about a race. */
export const STARTS_POLLED = 3;

/** One start of the stack on a fresh data folder; polled from its first moment unless `polled` is false. */
export async function startFresh(
  drill: Drill,
  polled: boolean,
): Promise<{ describe: string; held: boolean; dataDir: string; ok: boolean }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'attack-drill-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const clientId = process.env.DEMO_CLIENT_ID ?? 'demo';
  const clientSecret = process.env.DEMO_CLIENT_SECRET ?? 'demo-secret';
  const t0 = Date.now();
  const poll = polled ? pollStartup(url, clientId, clientSecret, t0) : null;
  try {
    drill.stack = await startStack({ dataDir, edgePort: port, seed: 7, supervise: true, log: drill.log });
  } catch (error) {
    await poll?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    const cause = startFailureCause(String((error as Error).message));
    return {
      ok: false,
      dataDir,
      held: false,
      describe: `start FAILED after ${seconds(Date.now() - t0)}: ${cause}${poll ? `; /healthz ${countLabels(poll.healthz)}; /connect/token ${countLabels(poll.token)}` : ''}`,
    };
  }
  const upMs = Date.now() - t0;
  if (!poll) return { ok: true, dataDir, held: true, describe: `started unpolled in ${seconds(upMs)}` };
  await until(() => poll.firstHealthy !== null && poll.firstToken !== null, 30_000);
  await sleep(500);
  await poll.stop();
  return {
    ok: true,
    dataDir,
    describe:
      `/healthz ${countLabels(poll.healthz)}; /connect/token ${countLabels(poll.token)}; the stack was up (npm start's banner) at ` +
      `${seconds(upMs)}, the first /healthz 200 at ${seconds(poll.firstHealthy)}, the first token at ${seconds(poll.firstToken)}; ` +
      `a token asked for right after the first /healthz 200: ${poll.tokenAfterHealthy ?? 'not asked'}`,
    held: startupHeld(poll),
  };
}
