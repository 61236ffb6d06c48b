/**
 * The records rule's check (`checkRecords`) on frames as connections hold them: snapshot records and change events
 * valid against the protocol's schemas pass, fields of a server's own included and int64 values beyond 2^53 − 1;
 * a PF4 group without its security entries, an account whose balance is text, a record missing its key, an op the
 * kind has not and a kind the family has not are each named with the kind, the key, the path and the rule broken;
 * the same bad record in two snapshots is one problem.
 */
import { describe, expect, it } from 'vitest';
import { parseJson } from '../../../shared/losslessJson.js';
import type { ProbeConnection, Received } from '../connection.js';
import { checkRecords } from './records.js';

/** A connection that received `frames` (JSON texts, read as the suite reads them). */
function received(...frames: string[]): ProbeConnection {
  return {
    frames: frames.map((text, i): Received => ({ seq: i + 1, at: 0, text, value: parseJson(text), isBinary: false })),
  } as unknown as ProbeConnection;
}

const chunk = (kind: string, items: unknown[]) =>
  JSON.stringify({ event: 'resync', op: 'chunk', record: { kind, items } });
const event = (kind: string, op: string, record: unknown) => JSON.stringify({ event: kind, op, record });
const sec = { show: 1, trade: 1, spreadDiff: 0, lotMin: 1, lotMax: 10000, lotStep: 1 };
const group = (name: string, extra: Record<string, unknown> = {}) => ({
  group: name,
  company: 'Broker',
  marginCall: 80,
  secGroups: Array.from({ length: 32 }, () => sec),
  secMargins: [],
  secMarginsTotal: 0,
  ...extra,
});

describe('checkRecords', () => {
  it("passes valid records, with a server's own fields and int64 values beyond 2^53 − 1", () => {
    const pf4 = checkRecords('PF4', [
      received(
        JSON.stringify({ id: 1, result: { version: 1 } }),
        JSON.stringify({ event: 'resync', op: 'begin', record: { server: 'x', family: 'PF4' } }),
        chunk('users', [{ login: 1000, group: 'demo', balance: 12.5, bridgeOwnField: { any: ['thing'] } }]),
        chunk('groups', [group('demo', { ownGroupField: true })]),
        JSON.stringify({ event: 'resync', op: 'end', record: { counts: { users: 1, groups: 1 } } }),
        event('users', 'delete', { login: 1000 }),
        event('groups', 'update', group('demo')),
      ),
    ]);
    expect(pf4).toEqual({ snapshotRecords: 2, events: 2, problems: [] });
    const pf5 = checkRecords('PF5', [
      received(
        chunk('users', [{ login: 9007199254740992, group: 'real', rights: 'Enabled, Password' }]),
        event('positions', 'delete', { position: 9007199254740996 }),
      ),
    ]);
    expect(pf5).toEqual({ snapshotRecords: 1, events: 1, problems: [] });
  });

  it('names each invalid record by kind, key, path and rule, each once across snapshots', () => {
    const { secGroups: _, ...withoutSecurities } = group('demo');
    const snapshot = [chunk('users', [{ login: 1001, balance: '5000' }]), chunk('groups', [withoutSecurities])];
    const result = checkRecords('PF4', [
      received(
        ...snapshot,
        event('users', 'update', { login: 1002, leverage: 1.5 }),
        event('users', 'delete', { name: 'no key' }),
        event('groups', 'delete', { group: 'demo' }),
        event('positions', 'add', { position: 1 }),
        event('groups', 'update', group('demo', { secGroups: [sec] })),
      ),
      received(...snapshot),
    ]);
    expect(result.snapshotRecords).toBe(4);
    expect(result.events).toBe(5);
    expect(result.problems).toEqual([
      'snapshot users login 1001: balance: must be number',
      'snapshot groups group "demo": secGroups: Invalid input: expected array, received undefined',
      'a users update event login 1002: leverage: must be integer',
      'a users delete event without login: login: Invalid input: expected number, received undefined',
      'a groups delete event group "demo": op: PF4 groups events are update',
      'a positions add event: PF4 servers push no positions events',
      'a groups update event group "demo": secGroups: Too small: expected array to have exactly 32 items',
    ]);
  });
});
