/**
 * v2 PF4 News. Headers and the bodies fetched so far are answered from the pumping cache (`news`, `newsBodies`);
 * `NewsBodyRequest` asks the server for a body, which arrives later on the change stream and is cached by key.
 * `NewsSend` publishes an item, whose header reaches the cache on the change stream like any other.
 */
import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { contractBody, intText, position } from '../../fields.js';
import { V2_PF4 as v2 } from '../paths.js';

/** A news item's key (int32, the server numbers items from 0 up). */
const newsKey = z.object({ key: intText('key', 0) });

/** The server's news record holds a topic of 255 and a category of 63 characters; a body is at most 64 KiB of text. */
export const NEWS_TOPIC_MAX = 255;
export const NEWS_CATEGORY_MAX = 63;
export const MESSAGE_BODY_MAX = 65_536;

/** A sent item's body text, absent or null for none (mail bodies are bounded alike). */
export const messageBody = z
  .string({ error: () => 'body must be a string' })
  .max(MESSAGE_BODY_MAX, `body must be at most ${MESSAGE_BODY_MAX} characters`)
  .nullish();

const newsSendBody = (contractBody('PF4NewsSendRequest') as z.ZodObject).extend({
  topic: z
    .string({ error: () => 'topic is required' })
    .min(1, 'topic must not be empty')
    .max(NEWS_TOPIC_MAX, `topic must be at most ${NEWS_TOPIC_MAX} characters`),
  category: z
    .string({ error: () => 'category must be a string' })
    .max(NEWS_CATEGORY_MAX, `category must be at most ${NEWS_CATEGORY_MAX} characters`)
    .nullish(),
  body: messageBody,
});

export const news = {
  NewsTotal: defineOperation({
    name: 'NewsTotal',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/NewsTotal`,
    tag: 'News',
    summary: 'Count of cached news items.',
    response: { type: 'integer', format: 'int32' },
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'custom' },
  }),
  NewsBodyGet: defineOperation({
    name: 'NewsBodyGet',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/NewsBodyGet/{key}`,
    tag: 'News',
    summary: 'Body text of a cached news item; not-found envelope until its body has been fetched (NewsBodyRequest).',
    params: newsKey,
    response: { type: 'string' },
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'custom' },
  }),
  NewsGet: defineOperation({
    name: 'NewsGet',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/NewsGet`,
    tag: 'News',
    summary: 'Cached news headers by key ascending, no bodies.',
    response: 'PF4NewsTopic[]',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'cachedList', table: 'news' },
  }),
  NewsTopicGet: defineOperation({
    name: 'NewsTopicGet',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/NewsTopicGet/{pos}`,
    tag: 'News',
    summary: 'The cached news header at a zero-based position (key order); not-found envelope when out of range.',
    params: z.object({ pos: position('pos') }),
    response: 'PF4NewsTopic',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'custom' },
  }),
  NewsBodyRequest: defineOperation({
    name: 'NewsBodyRequest',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/NewsBodyRequest/{key}`,
    tag: 'News',
    summary: 'Queues a fetch of a news body and answers true (fire-and-forget); the body later appears in NewsBodyGet.',
    params: newsKey,
    response: { type: 'boolean' },
    timeout: 'change',
    read: 'live',
    answer: { kind: 'live', command: 'NewsBodyRequest', keyedRead: true },
  }),
  NewsSend: defineOperation({
    name: 'NewsSend',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/NewsSend`,
    tag: 'News',
    summary:
      'Publishes a news item (topic required) to the terminals; it joins NewsGet under the next key, its body readable through NewsBodyRequest.',
    body: newsSendBody,
    response: { type: 'boolean' },
    timeout: 'change',
    read: 'live',
    mutating: true,
    controlCharacters: { 'body.body': 'lineBreaks' },
    answer: { kind: 'live', command: 'NewsSend' },
  }),
};
