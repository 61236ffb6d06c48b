/**
 * The conformance suite is able to fail: run against each deliberately broken server of broken/servers.ts (all
 * in-process behind one kit listener on 127.0.0.1, port 0), it fails exactly the rules that server names, for the
 * reason it is broken (each failure's detail says what was expected and what came), and every other rule passes or
 * is skipped only for what the server does not declare or the run does not allow. The correct bases (PF4, PF4 behind
 * a tap that passes every frame, PF5) fail nothing. docs/conformance.md tables every server with the rules it fails.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Family } from '../../shared/protocol.js';
import { BROKEN_SERVERS, type BrokenServer } from './broken/servers.js';
import { serveBroken, type ServedBroken } from './broken/serve.js';
import { rulesFor, type ConformanceReport } from './suite.js';

/** What the bases skip: the writes needing commands or event kinds they do not declare (and PF5 has no restart). */
const SKIPPED_WITH_WRITES: Record<Family, readonly string[]> = {
  PF4: [
    'writes.pf4.trade-open',
    'writes.pf4.trade-modify',
    'writes.pf4.trade-close',
    'writes.pf4.pending-order',
    'writes.pf4.symbols-refresh',
    'writes.pf4.symbol-group-update',
    'writes.pf4.news-send',
    'writes.pf4.mail-send',
  ],
  PF5: [
    'writes.pf5.deposit',
    'writes.pf5.position-open',
    'writes.pf5.deal-update',
    'writes.pf5.position-close',
    'writes.pf5.order-place',
    'writes.pf5.order-cancel',
    'writes.pf5.symbol-update',
    'writes.restart',
  ],
};

function expectedSkips(server: BrokenServer): string[] {
  const skips = server.writes
    ? SKIPPED_WITH_WRITES[server.family]
    : [
        'capabilities.write-probes',
        ...rulesFor(server.family)
          .map((r) => r.id)
          .filter((id) => id.startsWith('writes.')),
      ];
  return skips.filter((id) => !server.fails.includes(id));
}

/** Why each broken server's first named rule fails: the detail the suite gives. */
const WHY: Record<string, RegExp> = {
  'login-any-password': /^login with a wrong password: expected error 3 \(InvalidData\), got result \{"version":1/,
  'login-answers-before-login': /^ServerTime before login: expected error 7 \(NotEnoughRights\), got result "\d{4}-/,
  'login-version-2': /^expected version 1, got 2$/,
  'login-offer-ignored': /^expected a refusal of versions \[999\], got result \{"version":1/,
  'login-other-family': /^expected family PF4, got "PF5"$/,
  'login-result-without-build': /^build: /,
  'login-malformed-unnamed':
    /the message "bad arguments" does not name login; .*does not name password; .*does not name pump/,
  'login-second-login-accepted': /^a second login: expected error 3 \(InvalidData\), got result/,
  'ping-time-not-iso': /^Ping time: expected an ISO 8601 date-time, got \d+$/,
  'ping-slow': /^Ping \(id \d+\) not answered within 150 ms$/,
  'server-time-epoch': /^ServerTime: expected an ISO 8601 date-time, got \d+$/,
  'capability-read-unknown':
    /^UserPasswordCheck: declared but answered \{"code":3,"message":"unknown command UserPasswordCheck"\}$/,
  'capability-write-unknown':
    /^UserPasswordSet: declared but answered \{"code":3,"message":"unknown command UserPasswordSet"\}$/,
  'capability-read-undeclared': /^GroupRecordRequest: not declared, but answered /,
  'capability-ping-undeclared': /^expected Ping among the declared commands; it is missing$/,
  'capability-unknown-succeeds': /: not declared, but answered a result/,
  'snapshot-begin-elsewhere':
    /^begin: expected \{server: "snapshot-begin-elsewhere", family: "PF4"\}, got \{"server":"snapshot-begin-elsewhere-elsewhere"/,
  'snapshot-kinds-reordered': /^a users chunk after groups: the documented order is users, trades/,
  'snapshot-undeclared-kind': /^a online chunk, a kind the login did not declare among its events$/,
  'snapshot-counts-off': /^users: end\.counts says 5, 4 items came$/,
  'snapshot-key-twice': /^users login 1000 twice$/,
  'snapshot-field-missing': /^users login 1001: leverage is 100 on the server, undefined in the cache/,
  'snapshot-events-before-end': /^groups group "managers": sessions is 1 on the server, 0 in the cache$/,
  // The manager's login stamp shows it (without --writes too), and the account the writes made.
  'reconnect-stale-snapshot':
    /still differs from the live session's: users login 1000: lastDate is "[^"]+" on the server, "[^"]+" in the cache; users login 1004: on the server, not in the cache \(lost\)$/,
  'reconnect-stale-snapshot-writes-only':
    /still differs from the live session's: users login 1004: on the server, not in the cache \(lost\)$/,
  'answers-id-not-first': /^login id 1: expected id first, got "\{\\"result\\":/,
  'answers-twice': /^UserPasswordCheck id \d+ answered twice$/,
  'answers-wrong-id': /^UserPasswordCheck: UserPasswordCheck \(id \d+\) not answered within \d+ ms$/,
  'answers-ids-32-bit': /id (999999998999996|1099511627\d+): \w+ \(id \d+\) not answered within \d+ ms/,
  'errors-code-as-text': /: expected an integer code, got "3"/,
  'errors-code-not-in-table': /: code -1 is not in the PF4 result-code table/,
  'frames-small-limit':
    /^the 16776192-byte request closed the connection with 1009 \("frame too large"\) instead of an answer$/,
  'frames-closed-1003': /^a non-JSON text frame: expected a close with 1007, got 1003$/,
  'frames-binary-read':
    /^a binary frame: expected a close with 1007, the connection stayed open \d+ ms; it sent "\{\\"id\\":77,\\"result\\"/,
  'int64-rounded':
    /^UserGet \{"login":9007199254740995\}: expected the record, got error \{"code":13,"message":"login 9007199254740996 not found"\}/,
  'int64-quoted': /^snapshot users login: expected bare integer digits, got "9007199254740993"/,
  'records-group-without-securities':
    /^\d+ invalid of \d+ snapshot records and \d+ change events: snapshot groups group "demo": secGroups: Invalid input: expected array, received undefined; snapshot groups group "managers": secGroups: /,
  'writes-event-lost': /^expected a users add event of 1004; it never came \(lost\)$/,
  'writes-event-late':
    /^expected a users update event of 1004 before the answer to a Ping sent after the change; it came after it \(out of order\)$/,
  'writes-event-stale':
    /^a users update event of 1004: the event's name is "Conformance Probe", the answer's "Conformance Probe Renamed"$/,
  'writes-group-event-stale':
    /^marginCall 80 → 81: a groups update event of demo: the event's marginCall is 80, the answer's 81; back to 80: a groups update event of demo: the event's marginCall is 81, the answer's 80$/,
  'writes-pf5-event-lost': /^expected a users add event of 9007199254740996; it never came \(lost\)$/,
  'writes-restart-ignored': /^SrvRestart answered true, but the session was still open \d+ ms later$/,
};

let served: ServedBroken;

beforeAll(async () => {
  served = await serveBroken(BROKEN_SERVERS);
});

afterAll(async () => {
  await served.close();
});

const ids = (report: ConformanceReport, result: string) =>
  report.results
    .filter((r) => r.result === result)
    .map((r) => r.id)
    .sort();

describe('the broken servers', () => {
  it('each names a break, rule ids the suite has, and the reason it fails (a correct base fails nothing)', () => {
    const known = new Set([...rulesFor('PF4'), ...rulesFor('PF5')].map((r) => r.id));
    for (const server of BROKEN_SERVERS) {
      for (const id of server.fails) expect(known, `${server.name} names ${id}`).toContain(id);
      expect(server.breaks.length).toBeGreaterThan(10);
      if (server.name.startsWith('correct-')) expect(server.fails).toEqual([]);
      else expect(WHY[server.name], `the reason ${server.name} fails`).toBeInstanceOf(RegExp);
    }
    expect(Object.keys(WHY).filter((name) => !BROKEN_SERVERS.some((s) => s.name === name))).toEqual([]);
  });

  it('are tabled in docs/conformance.md, each with the rules it fails', () => {
    const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'conformance.md'), 'utf8');
    const section = doc.slice(doc.indexOf('\n## How the suite is shown able to fail'));
    const rows = section
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => {
        const cells = line.split(' | ');
        const fails = cells.at(-1)!.replace(/ \|$/, '');
        return [
          cells[0].replace(/^\| `|`$/g, ''),
          fails === 'none' ? [] : fails.split(', ').map((id) => id.replace(/`/g, '')),
        ];
      });
    expect(rows).toEqual(BROKEN_SERVERS.map((server) => [server.name, [...server.fails]]));
  });
});

describe.concurrent('the suite against each broken server', () => {
  it.for(BROKEN_SERVERS.map((server) => [server.name, server] as const))(
    '%s fails exactly its rules',
    async ([, server], { expect }) => {
      const report = await served.runAgainst(server);
      expect(report.family).toBe(server.family);
      expect(report.results.map((r) => r.id)).toEqual(rulesFor(server.family).map((r) => r.id));
      const failed = Object.fromEntries(
        report.results.filter((r) => r.result === 'failed').map((r) => [r.id, r.detail]),
      );
      expect(Object.keys(failed).sort()).toEqual([...server.fails].sort());
      expect(ids(report, 'skipped')).toEqual(expectedSkips(server).sort());
      if (server.fails.length) expect(failed[server.fails[0]]).toMatch(WHY[server.name]);
      expect(report).toMatchObject({
        failed: server.fails.length,
        passed: report.results.length - server.fails.length - report.skipped,
      });
    },
  );
});
