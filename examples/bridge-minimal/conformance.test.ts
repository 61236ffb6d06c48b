/**
 * The conformance suite (bridge/conformance/, the library runner) against the minimal bridge, in this process on an
 * ephemeral loopback port, with `--writes`: every rule passes for what the bridge declares, and every other rule is
 * skipped because the bridge does not declare what it needs, named here one by one. The world is the seed file's,
 * fresh for the run (the suite's writes stay in that world's memory).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runConformance, type ConformanceReport } from '../../bridge/conformance/suite.js';
import { startMinimalBridge, type RunningBridge } from './bridge.js';
import { DEFAULT_WORLD } from './options.js';
import { World } from './world.js';

const PASSWORD = 'conformance-minimal-password';
let bridge: RunningBridge;
let world: World;

beforeAll(async () => {
  world = World.load(DEFAULT_WORLD);
  bridge = await startMinimalBridge({
    world,
    name: 'minimal-pf4',
    manager: { login: 1000, password: PASSWORD },
    port: 0,
    host: '127.0.0.1',
  });
});
afterAll(() => bridge?.close());

const ids = (report: ConformanceReport, result: string) =>
  report.results.filter((r) => r.result === result).map((r) => r.id);
const detail = (report: ConformanceReport, id: string) => report.results.find((r) => r.id === id)?.detail;

/** The write rules whose commands the bridge does not declare, with the first command each names. */
const UNDECLARED_WRITES: Record<string, string> = {
  'writes.pf4.deposit': 'TradeTransaction',
  'writes.pf4.trade-open': 'TradeTransaction',
  'writes.pf4.trade-modify': 'TradeTransaction',
  'writes.pf4.trade-close': 'TradeTransaction',
  'writes.pf4.pending-order': 'TradeTransaction',
  'writes.pf4.group-update': 'GroupRecordUpdate',
  'writes.pf4.symbols-refresh': 'SymbolsRefresh',
  'writes.pf4.symbol-group-update': 'CfgUpdateSymbolGroup',
  'writes.pf4.news-send': 'NewsSend',
  'writes.pf4.mail-send': 'MailSend',
  'writes.pf4.user-delete': 'UsersGroupOp',
};

describe('the conformance suite against the minimal bridge', () => {
  it('with --writes: every rule for what it declares passes, the rest are skipped as not declared', async () => {
    const report = await runConformance({
      server: bridge.url,
      login: 1000,
      password: PASSWORD,
      family: 'PF4',
      writes: true,
    });
    expect(
      Object.fromEntries(report.results.filter((r) => r.result === 'failed').map((r) => [r.id, r.detail])),
    ).toEqual({});
    expect(ids(report, 'skipped').sort()).toEqual([...Object.keys(UNDECLARED_WRITES), 'writes.restart'].sort());
    for (const [id, command] of Object.entries(UNDECLARED_WRITES))
      expect(detail(report, id)).toBe(`not declared: ${command}`);
    expect(detail(report, 'writes.restart')).toBe('SrvRestart not declared');
    // What it declares is checked: its login, its snapshot against its live reads, its writes' events, the cache after.
    expect(detail(report, 'login.result-schema')).toBe(
      'minimal-pf4, PF4 build 1, version 1, 8 commands, events users, groups',
    );
    expect(detail(report, 'snapshot.matches-live')).toMatch(
      /^users \(3, UserRecordsRequest\), groups \(2, GroupsRequest\); not compared: /,
    );
    expect(detail(report, 'writes.pf4.user-add')).toBe('a users add event of 100004 (login 100004)');
    expect(detail(report, 'writes.pf4.user-update')).toBe('a users update event of 100004');
    expect(detail(report, 'writes.cache-matches-live')).toBe(
      'users (4, UserRecordsRequest), groups (2, GroupsRequest)',
    );
    expect(detail(report, 'capabilities.read-probes')).toBe('6 declared reads answered');
    // Every account and group record it sent (its groups with their 32 security entries) fits the protocol's schemas.
    expect(detail(report, 'records.schema')).toMatch(/^\d+ snapshot records and [1-9]\d* change events valid$/);
    expect(report).toMatchObject({ family: 'PF4', failed: 0, skipped: 12, passed: report.results.length - 12 });
    // The suite's account is in the bridge's memory, renamed.
    expect(world.user(100004)).toMatchObject({ name: 'Conformance Probe Renamed', group: 'demo' });
  });
});
