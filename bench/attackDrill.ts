/**
 * `npm run drill:attack`: attacks on a whole stack (simulator, broker, edge in local workerd) started on a fresh data
 * folder, each printed as one line with its measured figures and HELD or NOT HELD, in the order:
 *
 *  0  a fresh data folder: `/healthz` and `/connect/token` polled every 100 ms from the first moment of the start (as
 *     `npm start` starts the stack), counting answers by status (no listener yet, 503 RegistryNotReady, 500, 200),
 *     and a token asked for as soon as `/healthz` first says 200; three such starts, each on a fresh folder (the
 *     attacks run on the last that came up, or, if none did, on one more start, unpolled);
 *  1  an SSE stream and a hub socket of a client that is disabled, and of a token that expires: how long until each
 *     is ended (SSE `closed` event, hub Close message and close frame) and what arrived after;
 *  2  30 wrong secrets for a client from one address, then its right secret from another address and on the local
 *     socket (distinct addresses come through Miniflare's own entry, which sets `request.cf`, as Cloudflare's front
 *     does; the local socket is one source for every caller); and 29 wrong secrets from one address, 12 s without a
 *     request, 29 more, in one rate-limit window;
 *  3  a flood of invented client ids, 8 callers, from one address and then from a new address per request, while
 *     another client's cached reads are timed on a thread of their own: latencies before and during, answers by
 *     status, secrets verified (the edge's verification counter, read every second), counters spent by the invented
 *     ids, workerd's CPU and memory, and the machine's CPU pressure;
 *  4  200 hub sockets that never send the handshake;
 *  5  600 SubscribeToTicks on one socket;
 *  6  huge arrays, a large invalid body, invalid UTF-8, and framing over a raw socket; an answer without the worker's
 *     `traceparent` header came from local workerd itself, before the worker ran;
 *  7  another organization's platforms down (one behind a broker that is not running, one on the same broker whose
 *     trading server is not there): the first organization's authenticated `/healthz`;
 *  8  the simulator frozen with SIGSTOP: seconds until `/healthz` shows its platforms down; then SIGCONT;
 *  9  UserPasswordCheck with a read-only client, and 6 wrong checks of one login;
 * 10  a read-only client flooding the manager session (a login repeated 18,542 times, bursts of 32 batch reads, 800
 *     mails of 65,536 characters and unpaged MailsRequest) while another client writes under Idempotency-Keys.
 *
 * The stack runs with the defaults of docs/operating.md's configuration table (variables set in this environment are
 * passed on, as `npm start` does). Each finding's bound is printed in its title. Findings go to standard output,
 * progress to standard error. Exits 0 when every finding held, 1 otherwise. Not part of `npm test`: it takes about
 * three minutes.
 *
 * The attacks live in bench/attack/, one file per kind, with what they share beside them (docs/testing.md, "Attack
 * drill").
 */
import { rmSync } from 'node:fs';
import { Drill, progress } from './attack/drill.js';
import { attackFlood } from './attack/flood.js';
import { attackInput } from './attack/input.js';
import { attackManagerSession, attackPasswordChecks } from './attack/managerSession.js';
import { attackFreeze, attackOtherOrganization } from './attack/platforms.js';
import { windowWithRoom } from './attack/rateLimits.js';
import { attackPacedFailures, attackWrongSecrets, PAUSE_MS } from './attack/secrets.js';
import { CACHE_SECONDS, WINDOW_MS } from './attack/settings.js';
import { startFresh, STARTS_POLLED } from './attack/startup.js';
import { attackSilentSockets, attackStreams, attackSubscriptions } from './attack/streams.js';

async function main(): Promise<number> {
  const started = Date.now();
  console.log(
    `attack drill: fresh stacks on temporary data folders; REGISTRY_CACHE_SECONDS ${CACHE_SECONDS}, rate-limit window ${WINDOW_MS / 1000} s`,
  );
  const drill = new Drill();
  let dataDir: string | undefined;
  try {
    // 0. STARTS_POLLED polled starts, each on a fresh folder; the attacks run on the last one that came up (the ones
    // before it are stopped), or, if none did, on one more start, unpolled.
    const attempts: string[] = [];
    let allHeld = true;
    for (let i = 1; i <= STARTS_POLLED + 1; i++) {
      const polled = i <= STARTS_POLLED;
      if (!polled && dataDir) break;
      progress(
        `0: start ${i} on a fresh data folder${polled ? ', polling /healthz and /connect/token every 100 ms' : ', not polled'}`,
      );
      if (dataDir && i <= STARTS_POLLED) {
        await drill.stack.close();
        rmSync(dataDir, { recursive: true, force: true });
        dataDir = undefined;
      }
      const attempt = await startFresh(drill, polled);
      attempts.push(`start ${i}${polled ? '' : ' (not polled)'}: ${attempt.describe}`);
      if (polled) allHeld &&= attempt.held;
      if (attempt.ok) dataDir = attempt.dataDir;
    }
    const failed = attempts.filter((a) => a.includes('start FAILED')).length;
    attempts.unshift(`${failed} of ${STARTS_POLLED} polled starts failed`);
    drill.found({
      id: '0',
      title: 'a fresh data folder polled from the first moment of the start',
      figures: attempts.join('. '),
      held: allHeld,
    });
    if (!dataDir) throw new Error('the stack did not start');
    console.log(`stack: ${dataDir}, edge ${drill.edgeUrl}`);

    // The paced failures need both bursts in one window; they run while the streams are watched.
    await windowWithRoom(PAUSE_MS + 15_000);
    const [, paced] = await Promise.all([attackStreams(drill), attackPacedFailures(drill)]);
    await attackWrongSecrets(drill);
    drill.found(paced);
    await attackFlood(drill);
    const silentReport = await attackSilentSockets(drill);
    await attackSubscriptions(drill);
    await attackInput(drill);
    await attackPasswordChecks(drill);
    await silentReport();
    await attackOtherOrganization(drill);
    await attackManagerSession(drill);
    await attackFreeze(drill);
  } catch (error) {
    console.log(`drill stopped: ${(error as Error).stack ?? String(error)}`);
    drill.findings.push({ id: '!', title: 'drill', figures: String(error), held: false });
  } finally {
    await drill.started?.close().catch(() => {});
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
  const held = drill.findings.filter((f) => f.held).length;
  console.log(
    `${held} of ${drill.findings.length} findings held; ${Math.round((Date.now() - started) / 1000)} s in all`,
  );
  return held === drill.findings.length ? 0 : 1;
}

process.exit(await main());
