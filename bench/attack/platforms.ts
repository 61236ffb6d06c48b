/**
 * Attacks on the platforms behind the edge: 7, another organization's platforms down (one behind a broker that is
 * not running, one on the same broker whose trading server is not there) and the first organization's authenticated
 * `/healthz`; 8, the simulator frozen with SIGSTOP: seconds until `/healthz` shows its platforms down, then SIGCONT.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writePrivateFile } from '../../launcher/privateData.js';
import { progress, type Drill } from './drill.js';
import { seconds } from './figures.js';
import { freePort, getJson } from './http.js';
import { FREEZE_BOUND_MS } from './settings.js';
import { sleep } from './waiting.js';

export async function attackOtherOrganization(drill: Drill): Promise<void> {
  const { stack, edgeUrl } = drill;
  progress("7: another organization's platforms down");
  const db = await stack.edge.db();
  const otherOrg = randomUUID();
  const behindDeadBroker = randomUUID();
  const serverMissing = randomUUID();
  const deadPort = await freePort();
  const now = new Date().toISOString();
  await db.batch([
    db
      .prepare('INSERT INTO organizations (id, name, created) VALUES (?, ?, ?)')
      .bind(otherOrg, 'Drill other organization', now),
    db
      .prepare(
        'INSERT INTO trade_platforms (id, name, type, organization_id, broker_url, created) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .bind(
        behindDeadBroker,
        'Other PF4 behind a stopped broker',
        'PF4',
        otherOrg,
        `http://127.0.0.1:${deadPort}`,
        now,
      ),
    db
      .prepare(
        'INSERT INTO trade_platforms (id, name, type, organization_id, broker_url, created) VALUES (?, ?, ?, ?, NULL, ?)',
      )
      .bind(serverMissing, 'Other PF4 without its server', 'PF4', otherOrg, now),
  ]);
  const platformsFile = join(stack.dataDir, 'broker-platforms.json');
  const original = readFileSync(platformsFile, 'utf8');
  const parsed = JSON.parse(original) as { platforms: Array<Record<string, unknown>> };
  const template = parsed.platforms[0];
  writePrivateFile(
    platformsFile,
    JSON.stringify(
      {
        platforms: [
          ...parsed.platforms,
          { ...template, id: serverMissing, server: `ws://127.0.0.1:${deadPort}/missing` },
        ],
      },
      null,
      2,
    ),
  );
  try {
    const brokerSays = async () => {
      const r = await fetch(`${stack.brokerUrl}/healthz`).catch(() => null);
      const body = (await r?.json().catch(() => ({}))) as { platforms?: Record<string, { up?: boolean }> } | undefined;
      return { status: r?.status ?? 0, serving: body?.platforms?.[serverMissing] !== undefined };
    };
    const deadline = Date.now() + 10_000;
    let broker = await brokerSays();
    while (!(broker.serving && broker.status === 503) && Date.now() < deadline) {
      await sleep(200);
      broker = await brokerSays();
    }
    const token = await stack.token();
    const own = await getJson(edgeUrl, '/healthz', token);
    const anonymous = await getJson(edgeUrl, '/healthz');
    const shown = typeof own.body?.platforms === 'object' ? Object.keys(own.body.platforms) : [];
    const mine = [stack.platforms.pf4, stack.platforms.pf5];
    drill.found({
      id: '7',
      title:
        "another organization's platforms down (one behind a broker not running, one on the shared broker with no server)",
      figures:
        `broker /healthz ${broker.status}; anonymous /healthz ${anonymous.status} broker ${anonymous.body?.broker} platforms ${anonymous.body?.platforms}; ` +
        `the first organization's authenticated /healthz ${own.status} ${own.body?.status}, platforms ${JSON.stringify(own.body?.platforms)}` +
        ` (${shown.every((p) => mine.includes(p)) && shown.length === mine.length ? 'only its own two' : 'NOT only its own'})`,
      held:
        broker.status === 503 &&
        anonymous.status === 503 &&
        own.status === 200 &&
        shown.length === 2 &&
        shown.every((p) => mine.includes(p)) &&
        mine.every((p) => own.body.platforms[p] === 'up'),
    });
  } finally {
    writePrivateFile(platformsFile, original);
    await db.batch([
      db.prepare('DELETE FROM trade_platforms WHERE organization_id = ?').bind(otherOrg),
      db.prepare('DELETE FROM organizations WHERE id = ?').bind(otherOrg),
    ]);
  }
}

// 8. A frozen simulator

export async function attackFreeze(drill: Drill): Promise<void> {
  const { stack, edgeUrl } = drill;
  progress('8: the simulator frozen with SIGSTOP');
  const token = await stack.token();
  const healthy = async () => (await getJson(edgeUrl, '/healthz')).status === 200;
  const deadline = Date.now() + 20_000;
  while (!(await healthy()) && Date.now() < deadline) await sleep(250);
  const pid = stack.sim.child.pid!;
  const samples: string[] = [];
  const stoppedAt = Date.now();
  process.kill(pid, 'SIGSTOP');
  let downMs: number | null = null;
  let anonymousDownMs: number | null = null;
  let upAgainMs: number | null = null;
  try {
    while (Date.now() - stoppedAt < 20_000 && (downMs === null || anonymousDownMs === null)) {
      const [own, anonymous] = await Promise.all([getJson(edgeUrl, '/healthz', token), getJson(edgeUrl, '/healthz')]);
      const platforms = (own.body?.platforms ?? {}) as Record<string, string>;
      samples.push(`${own.status}`);
      if (
        downMs === null &&
        own.status === 503 &&
        platforms[stack.platforms.pf4] === 'down' &&
        platforms[stack.platforms.pf5] === 'down'
      )
        downMs = Date.now() - stoppedAt;
      if (anonymousDownMs === null && anonymous.status === 503 && anonymous.body?.platforms === 'down')
        anonymousDownMs = Date.now() - stoppedAt;
      await sleep(250);
    }
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  const continuedAt = Date.now();
  while (Date.now() - continuedAt < 30_000) {
    if (await healthy()) {
      upAgainMs = Date.now() - continuedAt;
      break;
    }
    await sleep(250);
  }
  const sampleEvery = 250;
  drill.found({
    id: '8',
    title: `simulator frozen (SIGSTOP) (bound ${seconds(FREEZE_BOUND_MS)}, docs/operating.md, plus ${sampleEvery} ms between samples)`,
    figures:
      `authenticated /healthz showed both demo platforms down after ${seconds(downMs)}, anonymous /healthz 503 platforms down after ${seconds(anonymousDownMs)}; ` +
      `after SIGCONT healthy again in ${seconds(upAgainMs)}`,
    held:
      downMs !== null &&
      downMs <= FREEZE_BOUND_MS + sampleEvery &&
      anonymousDownMs !== null &&
      anonymousDownMs <= FREEZE_BOUND_MS + sampleEvery,
  });
}
