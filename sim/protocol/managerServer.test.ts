/**
 * Which peer addresses the simulator's listener takes (`peerFilter`): loopback always, the configured addresses and
 * ranges besides, IPv4 peers also as an IPv6 socket reports them (`::ffff:…`).
 */
import { describe, expect, it } from 'vitest';
import { parseAddressRanges } from '../../shared/addressRanges.js';
import { peerFilter } from './managerServer.js';

describe('peerFilter', () => {
  it('takes loopback and nothing else by default', () => {
    const allowed = peerFilter([]);
    expect(['127.0.0.1', '::1', '::ffff:127.0.0.1'].map(allowed)).toEqual([true, true, true]);
    expect(['127.0.0.2', '10.0.0.5', '::ffff:10.0.0.5', 'fd00::1', undefined].map(allowed)).toEqual([false, false, false, false, false]);
  });

  it('takes the configured addresses and ranges, however the peer\'s address is written', () => {
    const allowed = peerFilter(parseAddressRanges('172.29.79.0/24 10.0.0.5 fd00::/8').ranges);
    expect(['172.29.79.1', '::ffff:172.29.79.254', '10.0.0.5', 'fd12::3', '127.0.0.1'].map(allowed)).toEqual([true, true, true, true, true]);
    expect(['172.29.80.1', '10.0.0.6', '::ffff:10.0.0.6', 'fe80::1', '127.0.0.2'].map(allowed)).toEqual([false, false, false, false, false]);
  });
});
