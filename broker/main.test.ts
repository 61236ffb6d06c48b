/**
 * The broker as a separate process, started as the launcher starts it (from its kept bundle): refuses to start
 * without its secret, prints its ready line, never logs the secret or a manager password, drains on SIGTERM (the
 * drain frame on its links, the drain's log lines) and exits 0, refuses a wrong BROKER_DRAIN_SECONDS, and takes its
 * bound on failed password checks from the environment.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeServiceBundle } from '../launcher/bundles.js';
import { FAKE_MANAGER, FAKE_PASSWORD, FakeManagerServer } from '../test/support/broker/fakeManagerServer.js';
import { PF4_RESULT } from '../shared/resultCodes.js';
import { eventually, TestLink } from '../test/support/broker/linkClient.js';

const SECRET = 'process-secret-never-logged';

/** What the launcher runs (launcher/stack.ts): the broker's kept bundle, or the entry through tsx without one. */
let brokerArgs: string[];

function run(env: Record<string, string>): { child: ChildProcess; lines: string[]; exited: Promise<number | null> } {
  const child = spawn(process.execPath, brokerArgs, {
    cwd: process.cwd(),
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  createInterface({ input: child.stdout }).on('line', (l) => lines.push(l));
  createInterface({ input: child.stderr }).on('line', (l) => lines.push(l));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, lines, exited };
}

let dir: string;
let fake: FakeManagerServer;
beforeAll(async () => {
  const bundle = await nodeServiceBundle('broker/main.ts');
  brokerArgs = bundle !== undefined ? ['--enable-source-maps', bundle] : ['--import', 'tsx', 'broker/main.ts'];
  dir = mkdtempSync(join(tmpdir(), 'broker-main-'));
  fake = await FakeManagerServer.start('PF4');
});
afterAll(async () => {
  await fake?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('broker process', () => {
  it('refuses to start without BROKER_SECRET', async () => {
    const { exited, lines } = run({ DATA_DIR: dir, BROKER_PORT: '0' });
    expect(await exited).toBe(1);
    expect(lines.join('\n')).toMatch(/BROKER_SECRET is required/);
  });

  it('prints its ready line, serves /healthz, and exits on SIGTERM without logging secrets', async () => {
    const id = '3f2a1b0c-0000-4000-8000-00000000000a';
    writeFileSync(
      join(dir, 'broker-platforms.json'),
      JSON.stringify({
        platforms: [{ id, family: 'PF4', server: fake.url, login: FAKE_MANAGER, password: FAKE_PASSWORD }],
      }),
    );
    const { child, lines, exited } = run({
      DATA_DIR: dir,
      BROKER_PORT: '0',
      BROKER_SECRET: SECRET,
      LOG_LEVEL: 'debug',
    });
    try {
      const ready = await eventually(
        () => lines.map((l) => JSON.parse(l)).find((m) => m.msg === 'broker listening'),
        20_000,
        50,
      );
      expect(Object.keys(ready)).toEqual(['msg', 'port']);
      const health = await eventually(async () => {
        const res = await fetch(`http://127.0.0.1:${ready.port}/healthz`);
        return res.status === 200 ? res.json() : null;
      }, 10_000);
      expect(health).toMatchObject({ status: 'ok', platforms: { [id]: { family: 'PF4', up: true } } });
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      const log = lines.join('\n');
      expect(log).not.toContain(SECRET);
      expect(log).not.toContain(FAKE_PASSWORD);
      for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('bounds failed password checks as PASSWORD_CHECK_FAILURES and PASSWORD_CHECK_WINDOW_SECONDS say', async () => {
    const id = '3f2a1b0c-0000-4000-8000-00000000000b';
    writeFileSync(
      join(dir, 'broker-platforms.json'),
      JSON.stringify({
        platforms: [{ id, family: 'PF4', server: fake.url, login: FAKE_MANAGER, password: FAKE_PASSWORD }],
      }),
    );
    const { child, lines, exited } = run({
      DATA_DIR: dir,
      BROKER_PORT: '0',
      BROKER_SECRET: SECRET,
      PASSWORD_CHECK_FAILURES: '1',
      PASSWORD_CHECK_WINDOW_SECONDS: '900',
    });
    let link: TestLink | undefined;
    try {
      const ready = await eventually(
        () => lines.map((l) => JSON.parse(l)).find((m) => m.msg === 'broker listening'),
        20_000,
        50,
      );
      await eventually(async () => (await fetch(`http://127.0.0.1:${ready.port}/healthz`)).status === 200, 10_000);
      link = await TestLink.open(ready.port, SECRET);
      // This trading server answers InvalidData, a PF4 server's "invalid login or password", to a password check.
      const first = await link.call(id, 'PF4.UserPasswordCheck', { login: 100001, body: 'guess-1' });
      expect(first).toMatchObject({ ok: false, data: false, error: { managerCode: PF4_RESULT.InvalidData } });
      const second = await link.call(id, 'PF4.UserPasswordCheck', { login: 100001, body: 'guess-2' });
      expect(second).toMatchObject({
        ok: false,
        error: {
          code: 'PF4Error',
          managerCode: PF4_RESULT.TooFrequent,
          message: expect.stringContaining('at most 1 per 900 s'),
        },
      });
      expect(fake.count('UserPasswordCheck')).toBe(1);
      // Let go first, as the edge does: a drain with a link open waits for it to be quiet (the drain test's part).
      await link.close();
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      await link?.close();
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('drains on SIGTERM: its links are told, the running call is answered, and it exits 0 once its links are let go', async () => {
    const id = '3f2a1b0c-0000-4000-8000-00000000000c';
    writeFileSync(
      join(dir, 'broker-platforms.json'),
      JSON.stringify({
        platforms: [{ id, family: 'PF4', server: fake.url, login: FAKE_MANAGER, password: FAKE_PASSWORD }],
      }),
    );
    const { child, lines, exited } = run({
      DATA_DIR: dir,
      BROKER_PORT: '0',
      BROKER_SECRET: SECRET,
      BROKER_ID: 'broker-z',
      BROKER_DRAIN_SECONDS: '30',
    });
    let link: TestLink | undefined;
    try {
      const ready = await eventually(
        () => lines.map((l) => JSON.parse(l)).find((m) => m.msg === 'broker listening'),
        20_000,
        50,
      );
      link = await TestLink.open(ready.port, SECRET);
      await eventually(async () => (await link!.ping(id)).platform === 'up', 10_000);
      const before = fake.count('ServerTime');
      fake.delays.set('ServerTime', 1000);
      const running = link.call(id, 'ServerTime');
      await eventually(() => fake.count('ServerTime') === before + 1);
      child.kill('SIGTERM');
      await eventually(() => link!.drains.length === 1);
      expect(link.drains).toStrictEqual([{ broker: 'broker-z' }]);
      expect(await running).toMatchObject({ ok: true, data: expect.any(String) });
      // The edge lets a draining broker's link go once its calls are answered; the broker exits when its links are gone.
      await link.close();
      expect(await exited).toBe(0);
      const messages = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(messages.find((m) => m.msg === 'broker draining')).toMatchObject({
        links: 1,
        runningCalls: 1,
        undeliveredOutcomes: 0,
        boundMs: 30_000,
      });
      expect(messages.find((m) => m.msg === 'broker drained')).toMatchObject({
        runningCalls: 0,
        undeliveredOutcomes: 0,
      });
    } finally {
      fake.delays.clear();
      await link?.close();
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('refuses a BROKER_DRAIN_SECONDS that is not a whole number of seconds from 1 to 3600', async () => {
    const { exited, lines } = run({
      DATA_DIR: dir,
      BROKER_PORT: '0',
      BROKER_SECRET: SECRET,
      BROKER_DRAIN_SECONDS: '0',
    });
    expect(await exited).toBe(1);
    expect(lines.join('\n')).toContain(
      'BROKER_DRAIN_SECONDS must be a whole number of seconds from 1 to 3600, got \\"0\\"',
    );
  });
});
