/**
 * The input rules of the v2 PF4 Common entries (shared/catalog/v2/pf4/common.ts), as the edge applies them in
 * validateInputs: the journal window, mode and filter with their exact messages, defaults and conversions, and what
 * each entry declares about itself.
 */
import { describe, expect, it } from 'vitest';
import { type Operation } from '../../index.js';
import { accepted, callerOf, entryOf, refused } from '../../../../test/support/catalog/calls.js';

const entry = (n: string): Operation => entryOf('v2.PF4.', n);
const call = callerOf('v2.PF4.');

const declared = (e: Operation) => ({
  method: e.method,
  path: e.path,
  tag: e.tag,
  response: e.response,
  timeout: e.timeout,
  read: e.read,
  mutating: e.mutating,
  destructive: e.destructive,
  scope: e.scope,
  paged: e.paged,
  answer: JSON.parse(JSON.stringify(e.answer)) as unknown,
});
const journal = (query: string) => call('JournalRequest', {}, query);

describe('v2 PF4 common: what each entry declares', () => {
  it('declares ManagerCommon a live read in the read time-out class', () => {
    expect(declared(entry('ManagerCommon'))).toStrictEqual({
      method: 'GET',
      path: '/api/v2/PF4/{tradePlatform}/ManagerCommon',
      tag: 'Common',
      response: 'PF4Common',
      timeout: 'read',
      read: 'live',
      mutating: false,
      destructive: false,
      scope: 'webapi',
      paged: undefined,
      answer: { kind: 'live', command: 'ManagerCommon' },
    });
  });

  it('declares JournalRequest a live read in the history time-out class', () => {
    expect(declared(entry('JournalRequest'))).toStrictEqual({
      method: 'GET',
      path: '/api/v2/PF4/{tradePlatform}/JournalRequest',
      tag: 'Common',
      response: 'PF4ServerLog[]',
      timeout: 'history',
      read: 'live',
      mutating: false,
      destructive: false,
      scope: 'webapi',
      paged: undefined,
      answer: { kind: 'live', command: 'JournalRequest' },
    });
  });

  it('gives both entries a summary sentence', () => {
    for (const name of ['ManagerCommon', 'JournalRequest'])
      expect(entry(name).summary, name).toMatch(/^[A-Z].{20,}[.)]$/);
  });
});

describe('v2 PF4 common: JournalRequest query', () => {
  it('defaults from to the epoch and mode to Full, and passes no to or filter when absent', () => {
    expect(journal('')).toStrictEqual(accepted({ from: '1970-01-01T00:00:00Z', mode: 'Full' }));
  });

  it('reads from and to as UTC ISO strings, a time without an offset as UTC', () => {
    expect(journal('?from=2024-01-01T00:00:00&to=2024-01-02T03:04:05%2B02:00')).toStrictEqual(
      accepted({ from: '2024-01-01T00:00:00.000Z', to: '2024-01-02T01:04:05.000Z', mode: 'Full' }),
    );
  });

  it('passes a known mode and a filter of 1 to 256 characters', () => {
    expect(journal('?mode=Errors&filter=x')).toStrictEqual(
      accepted({ from: '1970-01-01T00:00:00Z', mode: 'Errors', filter: 'x' }),
    );
    expect(journal(`?mode=Failover&filter=${'f'.repeat(256)}`)).toStrictEqual(
      accepted({ from: '1970-01-01T00:00:00Z', mode: 'Failover', filter: 'f'.repeat(256) }),
    );
  });

  it("reads mode in any case and by its number (the spec's default 4 is Full)", () => {
    expect(journal('?mode=errors')).toStrictEqual(accepted({ from: '1970-01-01T00:00:00Z', mode: 'Errors' }));
    expect(journal('?mode=4')).toStrictEqual(accepted({ from: '1970-01-01T00:00:00Z', mode: 'Full' }));
    expect(journal('?mode=1')).toStrictEqual(accepted({ from: '1970-01-01T00:00:00Z', mode: 'Logins' }));
    expect(journal('?mode=8')).toStrictEqual(
      refused(
        'mode: mode must be one of Standard, Logins, Trades, Errors, Full, Updater, SendMail, Failover or its number 0 to 7',
      ),
    );
  });

  it('refuses an unknown mode, listing the known ones', () => {
    expect(journal('?mode=Debug')).toStrictEqual(
      refused(
        'mode: mode must be one of Standard, Logins, Trades, Errors, Full, Updater, SendMail, Failover or its number 0 to 7',
      ),
    );
  });

  it('refuses an empty filter and a 257-character one', () => {
    expect(journal('?filter=')).toStrictEqual(refused('filter: filter must not be empty'));
    expect(journal(`?filter=${'f'.repeat(257)}`)).toStrictEqual(
      refused('filter: filter must be at most 256 characters'),
    );
  });

  it('refuses from and to that are not date-times, naming each', () => {
    expect(journal('?from=yesterday&to=2024-01-01')).toStrictEqual(
      refused('from: from must be an ISO 8601 date-time; to: to must be an ISO 8601 date-time'),
    );
  });

  it('accepts to equal to from and refuses to one second before from', () => {
    expect(journal('?from=2024-01-01T00:00:00Z&to=2024-01-01T00:00:00Z')).toStrictEqual(
      accepted({ from: '2024-01-01T00:00:00.000Z', to: '2024-01-01T00:00:00.000Z', mode: 'Full' }),
    );
    expect(journal('?from=2024-01-01T00:00:01Z&to=2024-01-01T00:00:00Z')).toStrictEqual(
      refused('to: to must not be before from'),
    );
  });

  it('compares to with the default from, the epoch', () => {
    expect(journal('?to=1970-01-01T00:00:00Z')).toStrictEqual(
      accepted({ from: '1970-01-01T00:00:00Z', to: '1970-01-01T00:00:00.000Z', mode: 'Full' }),
    );
    expect(journal('?to=1969-12-31T23:59:59Z')).toStrictEqual(refused('to: to must not be before from'));
  });

  it('compares the instants, not the texts: a later local time with an earlier offset is refused', () => {
    expect(journal('?from=2024-01-01T10:00:00Z&to=2024-01-01T11:00:00%2B02:00')).toStrictEqual(
      refused('to: to must not be before from'),
    );
  });
});
