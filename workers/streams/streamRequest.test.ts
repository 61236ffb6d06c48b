/** The stream object's request headers read back, and a stored config from before platforms had lists. */
import { describe, expect, it } from 'vitest';
import { readStreamRequest, restoredConfig, sseInterest, STREAM_HEADERS } from './streamRequest.js';

describe('a stream request', () => {
  it('reads the platform, its brokers in order, the shard, the caller with its source address and the kind', () => {
    const h = new Headers({
      [STREAM_HEADERS.platform]: 'p1',
      [STREAM_HEADERS.family]: 'PF5',
      [STREAM_HEADERS.broker]: ' http://a:1 , http://b:2,,',
      [STREAM_HEADERS.shard]: '3',
      [STREAM_HEADERS.kind]: 'hub',
      [STREAM_HEADERS.client]: 'c1',
      [STREAM_HEADERS.organization]: 'o1',
      [STREAM_HEADERS.expires]: '1234',
      [STREAM_HEADERS.address]: '203.0.113.9',
    });
    expect(readStreamRequest(h)).toStrictEqual({
      config: { platform: 'p1', family: 'PF5', brokerUrls: ['http://a:1', 'http://b:2'], shard: 3 },
      caller: { clientId: 'c1', organizationId: 'o1', expiresAt: 1234, address: '203.0.113.9' },
      hub: true,
    });
  });

  it('bounds the shard to 0–255, and takes missing headers as empty', () => {
    expect(readStreamRequest(new Headers({ [STREAM_HEADERS.shard]: '999' })).config.shard).toBe(255);
    expect(readStreamRequest(new Headers({ [STREAM_HEADERS.shard]: '-4' })).config.shard).toBe(0);
    const bare = readStreamRequest(new Headers());
    expect(bare.config).toStrictEqual({ platform: '', family: null, brokerUrls: [], shard: 0 });
    expect(bare.caller).toStrictEqual({ clientId: '', organizationId: '', expiresAt: 0, address: null });
    expect(bare.hub).toBe(false);
  });

  it("reads an SSE stream's topics and symbols, null symbols meaning every one", () => {
    const named = sseInterest(
      new Headers({ [STREAM_HEADERS.topics]: 'ticks,trades', [STREAM_HEADERS.symbols]: 'EURUSD,GBPUSD' }),
    );
    expect([...named.topics]).toEqual(['ticks', 'trades']);
    expect([...named.symbols!]).toEqual(['EURUSD', 'GBPUSD']);
    const every = sseInterest(new Headers({ [STREAM_HEADERS.topics]: 'ticks' }));
    expect(every.symbols).toBeNull();
  });

  it('restores a stored config, one stored with a single broker as a list of one', () => {
    expect(restoredConfig({ platform: 'p', family: 'PF4', shard: 1, brokerUrl: 'http://a' })).toStrictEqual({
      platform: 'p',
      family: 'PF4',
      shard: 1,
      brokerUrls: ['http://a'],
    });
    expect(
      restoredConfig({ platform: 'p', family: 'PF4', shard: 0, brokerUrls: ['http://b', 'http://c'] }),
    ).toStrictEqual({ platform: 'p', family: 'PF4', shard: 0, brokerUrls: ['http://b', 'http://c'] });
    expect(restoredConfig({ platform: 'p', family: 'PF4', shard: 0 }).brokerUrls).toEqual([]);
  });
});
