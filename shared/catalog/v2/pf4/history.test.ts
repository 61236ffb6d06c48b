/**
 * The input rules of the v2 PF4 History entry (shared/catalog/v2/pf4/history.ts), as the edge applies them in
 * validateInputs: the login, the optional time window with its order rule and exact messages, the conversions to UTC
 * ISO strings, and what the entry declares about itself.
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
const history = (query: string, login = '7') => call('TradesUserHistory', { login }, query);

describe('v2 PF4 history: TradesUserHistory', () => {
  it('declares a live keyed read in the history time-out class', () => {
    expect(declared(entry('TradesUserHistory'))).toStrictEqual({
      method: 'GET',
      path: '/api/v2/PF4/{tradePlatform}/TradesUserHistory/{login}',
      tag: 'History',
      response: 'PF4Trade[]',
      timeout: 'history',
      read: 'live',
      mutating: false,
      destructive: false,
      scope: 'webapi',
      paged: undefined,
      answer: { kind: 'live', command: 'TradesUserHistory', keyedRead: true },
    });
    expect(entry('TradesUserHistory').summary).toMatch(/^[A-Z].{20,}[.)]$/);
  });

  it('passes the login alone when no window is given', () => {
    expect(history('')).toStrictEqual(accepted({ login: 7 }));
  });

  it('refuses a login of 0 and one beyond int32', () => {
    expect(history('', '0')).toStrictEqual(refused('login: login must be at least 1'));
    expect(history('', '2147483648')).toStrictEqual(refused('login: login must be at most 2147483647'));
  });

  it('reads fromTime and toTime as UTC ISO strings, a time without an offset as UTC', () => {
    expect(history('?fromTime=2024-03-01T00:00:00&toTime=2024-03-02T00:00:00-01:00')).toStrictEqual(
      accepted({ login: 7, fromTime: '2024-03-01T00:00:00.000Z', toTime: '2024-03-02T01:00:00.000Z' }),
    );
  });

  it('takes either end of the window alone', () => {
    expect(history('?fromTime=2024-03-01T00:00:00Z')).toStrictEqual(
      accepted({ login: 7, fromTime: '2024-03-01T00:00:00.000Z' }),
    );
    expect(history('?toTime=1970-01-01T00:00:00Z')).toStrictEqual(
      accepted({ login: 7, toTime: '1970-01-01T00:00:00.000Z' }),
    );
  });

  it('refuses times that are not date-times, naming each', () => {
    expect(history('?fromTime=today&toTime=2024-13-01T00:00:00Z')).toStrictEqual(
      refused('fromTime: fromTime must be an ISO 8601 date-time; toTime: toTime must be an ISO 8601 date-time'),
    );
    expect(history(`?fromTime=${'1'.repeat(65)}`)).toStrictEqual(
      refused('fromTime: fromTime must be at most 64 characters; fromTime: fromTime must be an ISO 8601 date-time'),
    );
  });

  it('accepts toTime equal to fromTime and refuses toTime one second before fromTime', () => {
    expect(history('?fromTime=2024-03-01T00:00:00Z&toTime=2024-03-01T00:00:00Z')).toStrictEqual(
      accepted({ login: 7, fromTime: '2024-03-01T00:00:00.000Z', toTime: '2024-03-01T00:00:00.000Z' }),
    );
    expect(history('?fromTime=2024-03-01T00:00:01Z&toTime=2024-03-01T00:00:00Z')).toStrictEqual(
      refused('toTime: toTime must not be before fromTime'),
    );
  });

  it('compares the instants, not the texts', () => {
    expect(history('?fromTime=2024-03-01T10:00:00Z&toTime=2024-03-01T11:00:00%2B02:00')).toStrictEqual(
      refused('toTime: toTime must not be before fromTime'),
    );
    expect(history('?fromTime=2024-03-01T10:00:00%2B02:00&toTime=2024-03-01T09:00:00Z')).toStrictEqual(
      accepted({ login: 7, fromTime: '2024-03-01T08:00:00.000Z', toTime: '2024-03-01T09:00:00.000Z' }),
    );
  });
});
