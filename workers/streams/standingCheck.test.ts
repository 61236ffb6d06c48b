/**
 * The re-check of a stream object's clients: the registry read once per check, each client ended that may not go on
 * (and told why), closed ones passed over, one check at a time, and an unreadable registry ending none.
 */
import { describe, expect, it } from 'vitest';
import type { StreamClient } from './clients.js';
import type { StreamCaller, StreamEnd } from './standing.js';
import { StandingCheck, type StandingRegistry } from './standingCheck.js';
import type { StreamConfig } from './streamRequest.js';
import type { ClientStanding, PlatformEntry } from '../registry/records.js';

const config: StreamConfig = { platform: 'p1', family: 'PF4', brokerUrls: ['http://a'], shard: 0 };
const later = Date.now() + 3_600_000;

/** A client that records how it was ended. */
function client(clientId: string, expiresAt = later, closed = false) {
  const ends: StreamEnd[] = [];
  const caller: StreamCaller = { clientId, organizationId: 'o1', expiresAt };
  const c = {
    caller,
    closed,
    end: (e: StreamEnd) => {
      ends.push(e);
    },
  } as unknown as StreamClient;
  return { c, ends };
}

/** A registry holding `standings`, with the platform in organization `org` (null: not registered). */
function registry(standings: ClientStanding[], org: string | null = 'o1', reads: string[][] = []) {
  const r: StandingRegistry = {
    findAnyPlatform: () =>
      Promise.resolve(
        org === null
          ? null
          : ({ platform: { type: 'PF4', organizationId: org }, brokerUrls: null } as unknown as PlatformEntry),
      ),
    findClientStandings: (ids) => {
      reads.push([...ids]);
      return Promise.resolve(new Map(standings.filter((s) => ids.includes(s.clientId)).map((s) => [s.clientId, s])));
    },
  };
  return r;
}

const standing = (clientId: string, extra: Partial<ClientStanding> = {}): ClientStanding => ({
  clientId,
  organizationId: 'o1',
  disabled: false,
  scopes: ['webapi'],
  allowedNetworks: [],
  ...extra,
});

describe('the standing check', () => {
  it('ends the streams that may not go on, each told why, reading each client once', async () => {
    const ok = client('ok');
    const again = client('ok');
    const expired = client('ok', Date.now() - 1);
    const disabled = client('off');
    const unknown = client('gone');
    const ended = client('off', later, true);
    const reads: string[][] = [];
    const check = new StandingCheck({
      clients: () => [ok.c, again.c, expired.c, disabled.c, unknown.c, ended.c],
      registry: () => registry([standing('ok'), standing('off', { disabled: true })], 'o1', reads),
      externalClients: () => false,
    });
    expect(await check.run(config)).toBe(3);
    expect(reads).toEqual([['ok', 'off', 'gone']]);
    expect(ok.ends).toEqual([]);
    expect(again.ends).toEqual([]);
    expect(expired.ends.map((e) => e.code)).toEqual(['TokenExpired']);
    expect(disabled.ends.map((e) => e.code)).toEqual(['ClientRevoked']);
    expect(unknown.ends.map((e) => e.code)).toEqual(['ClientRevoked']);
    expect(ended.ends).toEqual([]);
  });

  it("ends every stream of a platform no longer the organization's, or registered for another family", async () => {
    const a = client('ok');
    const moved = new StandingCheck({
      clients: () => [a.c],
      registry: () => registry([standing('ok')], 'o2'),
      externalClients: () => false,
    });
    expect(await moved.run(config)).toBe(1);
    expect(a.ends.map((e) => e.code)).toEqual(['PlatformRemoved']);
    const b = client('ok');
    const pf5 = new StandingCheck({
      clients: () => [b.c],
      registry: () => registry([standing('ok')]),
      externalClients: () => false,
    });
    expect(await pf5.run({ ...config, family: 'PF5' })).toBe(1);
    expect(b.ends.map((e) => e.code)).toEqual(['PlatformRemoved']);
  });

  it('lets a client the external provider vouches for go on unregistered', async () => {
    const a = client('external');
    const check = new StandingCheck({
      clients: () => [a.c],
      registry: () => registry([]),
      externalClients: () => true,
    });
    expect(await check.run(config)).toBe(0);
    expect(a.ends).toEqual([]);
  });

  it('reads nothing without clients, runs one check at a time, and ends none when the registry cannot be read', async () => {
    let reads = 0;
    const none = new StandingCheck({
      clients: () => [],
      registry: () => {
        reads++;
        return registry([]);
      },
      externalClients: () => false,
    });
    expect(await none.run(config)).toBe(0);
    expect(reads).toBe(0);

    const a = client('gone');
    let release: () => void = () => {};
    const slow: StandingRegistry = {
      ...registry([]),
      findClientStandings: () =>
        new Promise((resolve) => {
          release = () => resolve(new Map());
        }),
    };
    const check = new StandingCheck({ clients: () => [a.c], registry: () => slow, externalClients: () => false });
    const first = check.run(config);
    expect(await check.run(config)).toBe(0);
    release();
    expect(await first).toBe(1);

    const broken: StandingRegistry = { ...registry([]), findAnyPlatform: () => Promise.reject(new Error('D1 down')) };
    const b = client('gone');
    let down = true;
    const failing = new StandingCheck({
      clients: () => [b.c],
      registry: () => (down ? broken : registry([])),
      externalClients: () => false,
    });
    expect(await failing.run(config)).toBe(0);
    expect(b.ends).toEqual([]);
    // The failed check is over: the next one runs.
    down = false;
    expect(await failing.run(config)).toBe(1);
    expect(b.ends.map((e) => e.code)).toEqual(['ClientRevoked']);
  });
});
