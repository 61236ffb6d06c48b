/**
 * The input rules of the v2 PF4 report operations (shared/catalog/v2/pf4/reports.ts), as the edge applies them
 * (validateInputs): the 32-bit time range of `from`, report windows, logins and template names with their defaults,
 * the daily-sync timestamp; the rows a performance read answers (fromOnwards); what each entry declares.
 */
import { describe, expect, it } from 'vitest';
import { type Operation } from '../../index.js';
import { fromOnwards, reports } from './reports.js';
import { openapiComponents } from '../../../records/contract.js';
import { validateInputs } from '../../inputs.js';
import { accepted, entryOf, none, refused, url } from '../../../../test/support/catalog/calls.js';

const op = (n: string): Operation => entryOf('v2.PF4.', n);
const call = (name: string, query: string) => validateInputs(op(name), {}, url(query), none);

/** What an entry declares besides its schemas, functions marked as such. */
const declared = (entry: Operation) =>
  JSON.parse(
    JSON.stringify(
      {
        tag: entry.tag,
        timeout: entry.timeout,
        read: entry.read,
        mutating: entry.mutating,
        destructive: entry.destructive,
        scope: entry.scope,
        paged: entry.paged,
        bodyLimitBytes: entry.bodyLimitBytes,
        controlCharacters: entry.controlCharacters,
        answer: entry.answer,
      },
      (_key, value) => (typeof value === 'function' ? 'function' : value),
    ),
  );

const RANGE = 'must be between 1970-01-01T00:00:00Z and 2038-01-19T03:14:07Z';
const WINDOW = '?from=2024-01-01T00:00:00Z&to=2024-01-31T00:00:00Z&logins=1001';
const windowArgs = { from: '2024-01-01T00:00:00.000Z', to: '2024-01-31T00:00:00.000Z', logins: [1001] };
/** Each report read with its template name bound and default. */
const REPORTS: Array<[string, number, string]> = [
  ['ReportsRequest', 32, 'RTL_report'],
  ['DailyReportsRequest', 31, 'RTL_dailyreport'],
  ['DailyReportsRequestEx', 31, 'RTL_dailyreport'],
];

describe('v2 PF4 reports: the entries', () => {
  it('declares the report operations', () => {
    expect(Object.keys(reports).sort()).toStrictEqual([
      'DailyReportsRequest',
      'DailyReportsRequestEx',
      'DailySyncRead',
      'DailySyncStart',
      'PerformanceRequest',
      'ReportsRequest',
    ]);
  });

  it('reads reports live under the history time-out; the daily sync changes server state', () => {
    const history = {
      tag: 'Reports',
      timeout: 'history',
      read: 'live',
      mutating: false,
      destructive: false,
      scope: 'webapi',
    };
    expect(declared(op('PerformanceRequest'))).toStrictEqual({
      ...history,
      answer: { kind: 'live', command: 'PerformanceRequest', result: 'function' },
    });
    expect(declared(op('ReportsRequest'))).toStrictEqual({
      ...history,
      answer: { kind: 'live', command: 'ReportsRequest' },
    });
    expect(declared(op('DailyReportsRequest'))).toStrictEqual({
      ...history,
      answer: { kind: 'live', command: 'DailyReportsRequest' },
    });
    expect(declared(op('DailyReportsRequestEx'))).toStrictEqual({ ...history, answer: { kind: 'custom' } });
    const sync = { ...history, mutating: true, scope: 'webapi.write' };
    expect(declared(op('DailySyncStart'))).toStrictEqual({
      ...sync,
      timeout: 'maintenance',
      answer: { kind: 'live', command: 'DailySyncStart' },
    });
    expect(declared(op('DailySyncRead'))).toStrictEqual({
      ...sync,
      answer: { kind: 'live', command: 'DailySyncRead' },
    });
  });

  it('publishes the Ex rows as an object of row arrays keyed by login', () => {
    expect(op('DailyReportsRequestEx').response).toStrictEqual({
      type: 'object',
      additionalProperties: { type: 'array', items: openapiComponents.PF4DailyReport },
    });
    expect(openapiComponents.PF4DailyReport).toMatchObject({ type: 'object' });
  });

  it('answers a performance read with the snapshots at or after from, by ctm', () => {
    const result = (
      op('PerformanceRequest').answer as { result: (rows: unknown, a: Record<string, unknown>) => unknown }
    ).result;
    const rows = [
      { ctm: '2024-01-03T00:00:00Z', cpu: 3 },
      { ctm: '2024-01-01T00:00:00Z', cpu: 1 },
      { ctm: '2024-01-02T00:00:00Z', cpu: 2 },
    ];
    expect(result(rows, { from: '2024-01-02T00:00:00.000Z' })).toStrictEqual([
      { ctm: '2024-01-02T00:00:00Z', cpu: 2 },
      { ctm: '2024-01-03T00:00:00Z', cpu: 3 },
    ]);
    expect(result(rows, {})).toStrictEqual([rows[1], rows[2], rows[0]]);
  });

  it('gives every entry a summary: a sentence without gaps where a name was left out', () => {
    for (const entry of Object.values(reports)) {
      expect(entry.summary.length, entry.id).toBeGreaterThan(20);
      expect(entry.summary, entry.id).not.toMatch(/ {2}| \.$|\( /);
      expect(entry.summary.endsWith('.'), entry.id).toBe(true);
    }
  });
});

describe('v2 PF4 reports: fromOnwards', () => {
  const rows = [
    { id: 'c', t: '2024-01-03T00:00:00Z' },
    { id: 'a1', t: '2024-01-01T00:00:00Z' },
    null,
    { id: 'b1', t: '2024-01-02T00:00:00Z' },
    { id: 'a2', t: '2024-01-01T00:00:00Z' },
    { id: 'untimed' },
    { id: 'b2', t: '2024-01-02T00:00:00Z' },
  ];
  const ids = (list: Array<Record<string, unknown>>) => list.map((r) => r.id);

  it("sorts by the key ascending, rows of one instant in the server's order, and leaves out rows without a time", () => {
    expect(ids(fromOnwards(rows, 't'))).toStrictEqual(['a1', 'a2', 'b1', 'b2', 'c']);
  });

  it('keeps the rows at or after from, the row at from included', () => {
    expect(ids(fromOnwards(rows, 't', '2024-01-02T00:00:00.000Z'))).toStrictEqual(['b1', 'b2', 'c']);
    expect(ids(fromOnwards(rows, 't', '2024-01-02T00:00:00.001Z'))).toStrictEqual(['c']);
    expect(ids(fromOnwards(rows, 't', '2024-01-04T00:00:00.000Z'))).toStrictEqual([]);
  });

  it('answers an empty list for a server answer that is not a list', () => {
    expect(fromOnwards(null, 't')).toStrictEqual([]);
    expect(fromOnwards({ t: '2024-01-01T00:00:00Z' }, 't')).toStrictEqual([]);
  });
});

describe('v2 PF4 reports: PerformanceRequest', () => {
  it('takes no from, or a from between 1970-01-01T00:00:00Z and 2038-01-19T03:14:07Z inclusive', () => {
    expect(call('PerformanceRequest', '')).toStrictEqual(accepted({}));
    expect(call('PerformanceRequest', '?from=1970-01-01T00:00:00Z')).toStrictEqual(
      accepted({ from: '1970-01-01T00:00:00.000Z' }),
    );
    expect(call('PerformanceRequest', '?from=2038-01-19T03:14:07Z')).toStrictEqual(
      accepted({ from: '2038-01-19T03:14:07.000Z' }),
    );
  });

  it('refuses the first millisecond outside the 32-bit range on either side', () => {
    expect(call('PerformanceRequest', '?from=1969-12-31T23:59:59.999Z')).toStrictEqual(
      refused(`from: from is out of range: it ${RANGE}`),
    );
    expect(call('PerformanceRequest', '?from=2038-01-19T03:14:07.001Z')).toStrictEqual(
      refused(`from: from is out of range: it ${RANGE}`),
    );
  });

  it('names from when it is not a date-time', () => {
    expect(call('PerformanceRequest', '?from=today')).toStrictEqual(
      refused('from: from must be an ISO 8601 date-time'),
    );
  });
});

describe('v2 PF4 reports: report windows (ReportsRequest, DailyReportsRequest, DailyReportsRequestEx)', () => {
  it('pass from, to and the logins, the template name defaulting per report', () => {
    for (const [name, , fallback] of REPORTS) {
      expect(call(name, `${WINDOW}&logins=7`), name).toStrictEqual(
        accepted({ ...windowArgs, logins: [1001, 7], name: fallback }),
      );
      expect(call(name, `${WINDOW}&name=custom`), name).toStrictEqual(accepted({ ...windowArgs, name: 'custom' }));
    }
  });

  it("take a template name up to the report's bound (32, 31) and refuse one more", () => {
    for (const [name, max] of REPORTS) {
      expect(call(name, `${WINDOW}&name=${'n'.repeat(max)}`), name).toStrictEqual(
        accepted({ ...windowArgs, name: 'n'.repeat(max) }),
      );
      expect(call(name, `${WINDOW}&name=${'n'.repeat(max + 1)}`), name).toStrictEqual(
        refused(`name: name must be at most ${max} characters`),
      );
      expect(call(name, `${WINDOW}&name=`), name).toStrictEqual(refused('name: name must not be empty'));
    }
  });

  it('accept to equal to from and refuse to before from, naming to', () => {
    for (const [name, , fallback] of REPORTS) {
      expect(call(name, '?from=2024-01-01T00:00:00Z&to=2024-01-01T00:00:00Z&logins=1'), name).toStrictEqual(
        accepted({ from: '2024-01-01T00:00:00.000Z', to: '2024-01-01T00:00:00.000Z', logins: [1], name: fallback }),
      );
      expect(call(name, '?from=2024-01-01T00:00:00Z&to=2023-12-31T23:59:59Z&logins=1'), name).toStrictEqual(
        refused('to: to must not be before from'),
      );
    }
  });

  it('require from, to and logins, and name the fields of bad values', () => {
    for (const [name] of REPORTS) {
      expect(call(name, ''), name).toStrictEqual(
        refused(
          'from: Invalid input: expected string, received undefined; ' +
            'to: Invalid input: expected string, received undefined; logins: Invalid input: expected array, received undefined',
        ),
      );
      expect(call(name, '?from=x&to=2024-01-01T00:00:00Z&logins=1'), name).toStrictEqual(
        refused('from: from must be an ISO 8601 date-time'),
      );
      expect(call(name, '?from=2024-01-01T00:00:00Z&to=y&logins=1'), name).toStrictEqual(
        refused('to: to must be an ISO 8601 date-time'),
      );
      expect(call(name, '?from=2024-01-01T00:00:00Z&to=2024-01-01T00:00:00Z&logins=0'), name).toStrictEqual(
        refused('logins.0: logins must be at least 1'),
      );
    }
  });
});

describe('v2 PF4 reports: DailySyncStart', () => {
  it('takes a timestamp from 0 to 2147483647 and refuses one past either end', () => {
    expect(call('DailySyncStart', '?timestamp=0')).toStrictEqual(accepted({ timestamp: 0 }));
    expect(call('DailySyncStart', '?timestamp=2147483647')).toStrictEqual(accepted({ timestamp: 2147483647 }));
    expect(call('DailySyncStart', '?timestamp=-1')).toStrictEqual(refused('timestamp: timestamp must be at least 0'));
    expect(call('DailySyncStart', '?timestamp=2147483648')).toStrictEqual(
      refused('timestamp: timestamp must be at most 2147483647'),
    );
    expect(call('DailySyncStart', '?timestamp=soon')).toStrictEqual(refused('timestamp: timestamp must be an integer'));
    expect(call('DailySyncStart', '')).toStrictEqual(
      refused('timestamp: Invalid input: expected string, received undefined'),
    );
  });
});
