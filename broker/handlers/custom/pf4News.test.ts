import { describe, expect, it } from 'vitest';
import { news } from '../../../shared/catalog/v2/pf4/index.js';
import { PumpCache } from '../../cache/pumpCache.js';
import { pf4NewsBindings } from './pf4News.js';
import {
  cacheOf,
  call,
  change,
  expectOperationError,
  expectPlainError,
  platformOf,
  resync,
} from '../../../test/support/broker/handlers.js';

/** A PF4NewsTopic as the contract has it. */
const topic = (key: number, title: string) => ({
  key,
  time: '2024-01-01T00:00:00Z',
  topic: title,
  category: 'Markets',
  keywords: null,
  priority: 0,
  langId: 0,
});

/** Topics arriving out of key order: positions follow the keys. */
const loaded = () =>
  cacheOf('PF4', { news: [topic(5, 'five'), topic(2, 'two'), { key: 9, topic: 'nine', extra: true }] });

const on = (cache: PumpCache, entry: (typeof news)[keyof typeof news], args: Record<string, unknown> = {}) =>
  call(pf4NewsBindings, entry, platformOf(cache.family, { cache }), args);

const NOT_FOUND = { code: 'NotFound', managerCode: 3 } as const;

describe('NewsTotal', () => {
  it('answers the count of cached topics, at once from a ready cache', () => {
    expect(on(loaded(), news.NewsTotal)).toEqual({ data: 3 });
    expect(on(cacheOf('PF4'), news.NewsTotal)).toEqual({ data: 0 });
  });

  it('waits for the first snapshot rather than answer from an empty cache', async () => {
    const cache = new PumpCache('PF4', { clock: () => 0 });
    const pending = on(cache, news.NewsTotal);
    expect(pending).toBeInstanceOf(Promise);
    resync(cache, { news: [topic(1, 'one')] });
    expect(await pending).toEqual({ data: 1 });
  });

  it('is an error on a cache without a news table, naming the family', async () => {
    await expectPlainError(() => on(cacheOf('PF5'), news.NewsTotal), 'the PF5 cache keeps no news table');
  });
});

describe('NewsTopicGet', () => {
  it('answers the topic at a zero-based position in key order', () => {
    const cache = loaded();
    expect(on(cache, news.NewsTopicGet, { pos: 0 })).toEqual({ data: topic(2, 'two') });
    expect(on(cache, news.NewsTopicGet, { pos: 1 })).toEqual({ data: topic(5, 'five') });
    expect(on(cache, news.NewsTopicGet, { pos: 2 })).toEqual({
      data: { ...topic(9, 'nine'), time: '1970-01-01T00:00:00Z', category: null },
    });
  });

  it('is not found past the last topic, with the count', async () => {
    await expectOperationError(() => on(loaded(), news.NewsTopicGet, { pos: 3 }), {
      ...NOT_FOUND,
      message: 'news position 3 is out of range (3 items)',
    });
    await expectOperationError(() => on(cacheOf('PF4'), news.NewsTopicGet, { pos: 0 }), {
      ...NOT_FOUND,
      message: 'news position 0 is out of range (0 items)',
    });
  });

  it('is an error on a cache without a news table', async () => {
    await expectPlainError(
      () => on(cacheOf('PF5'), news.NewsTopicGet, { pos: 0 }),
      'the PF5 cache keeps no news table',
    );
  });
});

describe('NewsBodyGet', () => {
  it('answers a fetched body', () => {
    const cache = loaded();
    change(cache, 'newsBodies', 'update', { key: 5, body: 'Rates unchanged.' });
    change(cache, 'newsBodies', 'update', { key: 2, body: '' });
    expect(on(cache, news.NewsBodyGet, { key: 5 })).toEqual({ data: 'Rates unchanged.' });
    expect(on(cache, news.NewsBodyGet, { key: 2 })).toEqual({ data: '' });
  });

  it('is not found, saying how to fetch it, for a listed topic whose body is not cached', async () => {
    const cache = loaded();
    change(cache, 'newsBodies', 'update', { key: 5, body: 'Rates unchanged.' });
    await expectOperationError(() => on(cache, news.NewsBodyGet, { key: 9 }), {
      ...NOT_FOUND,
      message: 'the body of news 9 is not cached; NewsBodyRequest fetches it',
    });
  });

  it('does not answer a body row without a text body', async () => {
    const cache = loaded();
    // Not through the cache's shaping (which always makes a text body): the handler's own check.
    cache.table('newsBodies')!.put({ key: 2, body: 42 });
    await expectOperationError(() => on(cache, news.NewsBodyGet, { key: 2 }), {
      ...NOT_FOUND,
      message: 'the body of news 2 is not cached; NewsBodyRequest fetches it',
    });
  });

  it('is not found for a key that is not listed', async () => {
    await expectOperationError(() => on(loaded(), news.NewsBodyGet, { key: 77 }), {
      ...NOT_FOUND,
      message: 'news 77 not found',
    });
  });

  it("answers a sent item's body once fetched, and no more once the server drops the item", async () => {
    const cache = loaded();
    change(cache, 'news', 'add', topic(10, 'sent'));
    expect(on(cache, news.NewsTopicGet, { pos: 3 })).toEqual({ data: topic(10, 'sent') });
    change(cache, 'newsBodies', 'update', { key: 10, body: 'Sent body.' });
    change(cache, 'newsBodies', 'update', { key: 2, body: 'Oldest body.' });
    expect(on(cache, news.NewsBodyGet, { key: 10 })).toEqual({ data: 'Sent body.' });
    change(cache, 'news', 'delete', { key: 2 });
    expect(cache.table('newsBodies')!.get(2)).toBeUndefined();
    expect(cache.table('newsBodies')!.get(10)).toEqual({ key: 10, body: 'Sent body.' });
    expect(on(cache, news.NewsTotal)).toEqual({ data: 3 });
    expect(on(cache, news.NewsTopicGet, { pos: 0 })).toEqual({ data: topic(5, 'five') });
    await expectOperationError(() => on(cache, news.NewsBodyGet, { key: 2 }), {
      ...NOT_FOUND,
      message: 'news 2 not found',
    });
  });

  it('is an error on a cache without a newsBodies table', async () => {
    await expectPlainError(
      () => on(cacheOf('PF5'), news.NewsBodyGet, { key: 1 }),
      'the PF5 cache keeps no newsBodies table',
    );
  });
});
