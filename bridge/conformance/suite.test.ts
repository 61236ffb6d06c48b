/**
 * The suite as a library against the simulator (in-process, port 0, its feed and online churn running), both
 * families, with and without `--writes`: every rule passes, and the only skips are the ones for what the run does not
 * allow or the server does not declare, named here one by one. The PF5 server's logins and tickets lie beyond
 * 2^53 − 1, so the int64 rules read exact big values. Then the suite against the same simulator seen through a proxy
 * that breaks one promise, an event lost or an event late (after the next answer): the write rule that made the
 * change fails, saying what was expected and what came, and so does the cache rule when the loss leaves it stale;
 * no other rule fails.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { parseJson, stringifyJson } from '../../shared/losslessJson.js';
import { startSim, type RunningSim } from '../../sim/index.js';
import { rulesFor, runConformance, type ConformanceReport, type RuleResult, type Timeouts } from './suite.js';

const PASSWORD = 'conformance-test-password';
const manager = [{ login: 1000, password: PASSWORD }];
const BIG = {
  loginRange: { min: '9007199254740993', max: '9007199254790000' },
  firstOrder: '9007199254800001',
  firstDeal: '9007199254900001',
};
let sim: RunningSim;

beforeAll(async () => {
  sim = await startSim({
    config: {
      servers: [
        { name: 'pf4', family: 'PF4', managers: manager },
        { name: 'pf4-writes', family: 'PF4', managers: manager },
        { name: 'pf4-proxied', family: 'PF4', managers: manager },
        { name: 'pf4-one-behind', family: 'PF4', managers: manager },
        { name: 'pf5', family: 'PF5', managers: manager, ...BIG },
        { name: 'pf5-writes', family: 'PF5', managers: manager, ...BIG },
        { name: 'pf5-one-behind', family: 'PF5', managers: manager, ...BIG },
      ],
    },
  });
});

afterAll(async () => {
  await sim.close();
});

/**
 * The bounds of the runs, over the suite's defaults for a real bridge: the simulator is in-process, so a second
 * answer comes right behind the first (the grace follows a Ping's round trip) and an event that is merely late comes
 * right behind the Ping's answer (the proxies below pass it on in the same turn); a lost one is then told in 300 ms.
 */
const LOCAL: Partial<Timeouts> = { graceMs: 20, lateEventMs: 300 };
/** Against a proxy that breaks a promise for good, the repeated comparisons fail alike: their pauses can be short. */
const BROKEN: Partial<Timeouts> = { ...LOCAL, retryMs: 10 };

const run = (server: string, family: 'PF4' | 'PF5', writes: boolean, port = sim.port, timeouts = LOCAL) =>
  runConformance({
    server: `ws://127.0.0.1:${port}/${server}`,
    login: 1000,
    password: PASSWORD,
    family,
    writes,
    timeouts,
  });

const byResult = (report: ConformanceReport, result: RuleResult['result']) =>
  Object.fromEntries(report.results.filter((r) => r.result === result).map((r) => [r.id, r.detail]));

const writeRuleIds = (family: 'PF4' | 'PF5') =>
  rulesFor(family)
    .map((r) => r.id)
    .filter((id) => id.startsWith('writes.'));

describe('the suite against the simulator', () => {
  it('PF4 without --writes: every rule passes but those that change data', async () => {
    const report = await run('pf4', 'PF4', false);
    expect(byResult(report, 'failed')).toEqual({});
    const needsWrites = ['capabilities.write-probes', ...writeRuleIds('PF4')];
    expect(Object.keys(byResult(report, 'skipped')).sort()).toEqual(needsWrites.sort());
    for (const detail of Object.values(byResult(report, 'skipped'))) expect(detail).toMatch(/^needs --writes/);
    expect(report.results.map((r) => r.id)).toEqual(rulesFor('PF4').map((r) => r.id));
    expect(report.results.some((r) => r.id.startsWith('int64.'))).toBe(false);
    // Every command the simulator declares is classified as a read or a write (none left unprobed).
    expect(byResult(report, 'passed')['capabilities.read-probes']).toMatch(/^\d+ declared reads answered$/);
    expect(report).toMatchObject({
      family: 'PF4',
      failed: 0,
      skipped: needsWrites.length,
      passed: report.results.length - needsWrites.length,
    });
  });

  it('PF4 with --writes: every rule passes, the restart included', async () => {
    const report = await run('pf4-writes', 'PF4', true);
    expect(byResult(report, 'failed')).toEqual({});
    expect(byResult(report, 'skipped')).toEqual({});
    expect(byResult(report, 'passed')['writes.restart']).toMatch(
      /closed with 1012; a new session took a snapshot of \d+ items/,
    );
    expect(byResult(report, 'passed')['writes.pf4.trade-close']).toContain('a margin delete event');
    // Every record of every snapshot (the reconnect's and the restart's too) and every change event, schema-valid.
    expect(byResult(report, 'passed')['records.schema']).toMatch(
      /^[1-9]\d{3,} snapshot records and [1-9]\d+ change events valid$/,
    );
  });

  it('PF5 without --writes: every rule passes but those that change data, int64 keys beyond 2^53 read exactly', async () => {
    const report = await run('pf5', 'PF5', false);
    expect(byResult(report, 'failed')).toEqual({});
    const needsWrites = ['capabilities.write-probes', ...writeRuleIds('PF5')];
    expect(Object.keys(byResult(report, 'skipped')).sort()).toEqual(needsWrites.sort());
    const passed = byResult(report, 'passed');
    expect(passed['int64.bare-digits']).toMatch(/^\d+ keys, [1-9]\d* beyond 2\^53 − 1$/);
    expect(passed['int64.round-trip']).toMatch(
      /users \d+, positions 90071992548\d+, orders 90071992548\d+, deals 90071992549\d+/,
    );
    expect(report.results.some((r) => r.id.startsWith('writes.pf4.'))).toBe(false);
    expect(passed['capabilities.read-probes']).toMatch(/^\d+ declared reads answered$/);
  });

  it('PF5 with --writes: every rule passes; the restart is skipped, PF5 declares no SrvRestart', async () => {
    const report = await run('pf5-writes', 'PF5', true);
    expect(byResult(report, 'failed')).toEqual({});
    expect(byResult(report, 'skipped')).toEqual({ 'writes.restart': 'SrvRestart not declared' });
    expect(byResult(report, 'passed')['writes.pf5.user-add']).toMatch(/login 90071992547\d+/);
    expect(byResult(report, 'passed')['records.schema']).toMatch(
      /^[1-9]\d{3,} snapshot records and [1-9]\d+ change events valid$/,
    );
  });
});

const isUserUpdate = (text: string) => text.startsWith('{"event":"users","op":"update"');

/**
 * A WebSocket proxy in front of the simulator's `server` that passes every frame but lets `onServerFrame` drop or
 * hold those from the server: it answers the frames to forward now. With `perConnection`, each connection gets a
 * filter of its own from `onServerFrame()`.
 */
async function proxy(
  server: string,
  onServerFrame: (text: string) => string[],
  perConnection?: () => (text: string) => string[],
): Promise<{ port: number; close(): Promise<void> }> {
  const wss = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    perMessageDeflate: false,
    maxPayload: 64 * 1024 * 1024,
  });
  await new Promise((resolve) => wss.once('listening', resolve));
  wss.on('connection', (client) => {
    const filter = perConnection?.() ?? onServerFrame;
    const upstream = new WebSocket(`ws://127.0.0.1:${sim.port}/${server}`, { perMessageDeflate: false });
    const queued: Array<[string, boolean]> = [];
    upstream.on('open', () => {
      for (const [data, binary] of queued.splice(0)) upstream.send(data, { binary });
    });
    client.on('message', (data, binary) => {
      if (upstream.readyState === WebSocket.OPEN) upstream.send(data, { binary });
      else queued.push([(data as Buffer).toString(), binary]);
    });
    upstream.on('message', (data) => {
      for (const text of filter((data as Buffer).toString())) client.send(text);
    });
    upstream.on('close', (code) => client.close(code === 1005 || code === 1006 ? 1000 : code));
    client.on('close', () => upstream.terminate());
    upstream.on('error', () => client.terminate());
  });
  return {
    port: (wss.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close(() => resolve());
      }),
  };
}

/**
 * A connection's filter whose `kind` update events are one step behind: each carries the record of its key as the
 * connection last saw it (in the snapshot or an earlier event), the record as it was before the change.
 */
function oneStepBehind(kind: string, key: string): () => (text: string) => string[] {
  return () => {
    const seen = new Map<string, unknown>();
    return (text) => {
      const frame = parseJson(text) as { event?: string; op?: string; record?: Record<string, unknown> } | undefined;
      if (frame?.event === 'resync' && frame.op === 'chunk' && frame.record?.kind === kind) {
        for (const item of frame.record.items as Array<Record<string, unknown>>) seen.set(String(item[key]), item);
      }
      if (frame?.event !== kind || frame.op !== 'update' || !frame.record) return [text];
      const k = String(frame.record[key]);
      const before = seen.get(k);
      seen.set(k, frame.record);
      return [before === undefined ? text : stringifyJson({ ...frame, record: before })];
    };
  };
}

describe('the suite against a server that breaks a promise', () => {
  // Rewriting a record with its own values would let these pass: the round trip's events must carry the values sent.
  it.for([
    ['PF4', 'symbolGroups', 'pf4-one-behind', 'pos', 'writes.pf4.symbol-group-update'],
    ['PF5', 'symbols', 'pf5-one-behind', 'symbol', 'writes.pf5.symbol-update'],
  ] as const)(
    '%s: fails the write whose %s update carries the record as it was before',
    async ([family, kind, server, key, rule], { expect }) => {
      const broken = await proxy(server, (text) => [text], oneStepBehind(kind, key));
      try {
        const report = await run(server, family, true, broken.port, BROKEN);
        const failed = byResult(report, 'failed');
        // The change back is stale too, so both caches the suite compares keep the changed value.
        expect(Object.keys(failed)).toEqual([rule, 'reconnect.fresh-snapshot', 'writes.cache-matches-live']);
        expect(failed[rule]).toMatch(
          new RegExp(
            `^description "([^"]+)" → "Conformance probe": a ${kind} update event of \\w+: the event's description is "\\1", ` +
              `the answer's "Conformance probe"; back to "\\1": a ${kind} update event of \\w+: the event's description is "Conformance probe", the answer's "\\1"$`,
          ),
        );
      } finally {
        await broken.close();
      }
    },
  );

  it('fails the write whose event is lost, and the cache rule after it, and no other rule', async () => {
    const broken = await proxy('pf4-proxied', (text) =>
      text.startsWith('{"event":"users","op":"delete"') ? [] : [text],
    );
    try {
      const report = await run('pf4-proxied', 'PF4', true, broken.port, BROKEN);
      const failed = byResult(report, 'failed');
      expect(Object.keys(failed)).toEqual(['writes.pf4.user-delete', 'writes.cache-matches-live']);
      expect(failed['writes.pf4.user-delete']).toMatch(
        /^expected a users delete event of \d+; it never came \(lost\)$/,
      );
      expect(failed['writes.cache-matches-live']).toMatch(
        /^users login \d+: in the cache, not on the server \(stale\)$/,
      );
    } finally {
      await broken.close();
    }
  });

  it('fails the write whose event comes after the answer to the Ping that follows it', async () => {
    let held: string[] = [];
    let once = false;
    let answersToPass = 0;
    const broken = await proxy('pf4-proxied', (text) => {
      if (!once && isUserUpdate(text) && text.includes('Conformance Probe Renamed')) {
        once = true;
        held.push(text);
        // The command's own answer, then the Ping's, go out first; the event after them.
        answersToPass = 2;
        return [];
      }
      if (text.startsWith('{"id":') && held.length && --answersToPass === 0) {
        const out = [text, ...held];
        held = [];
        return out;
      }
      return [text];
    });
    try {
      const report = await run('pf4-proxied', 'PF4', true, broken.port, BROKEN);
      const failed = byResult(report, 'failed');
      expect(Object.keys(failed)).toEqual(['writes.pf4.user-update']);
      expect(failed['writes.pf4.user-update']).toMatch(
        /^expected a users update event of \d+ before the answer to a Ping sent after the change; it came after it \(out of order\)$/,
      );
    } finally {
      await broken.close();
    }
  });
});
