/**
 * The input rules of the v2 PF4 News entries (shared/catalog/v2/pf4/news.ts), as the edge applies them in
 * validateInputs: news keys and positions from the path with their bounds and exact messages, the sent item's body
 * (topic, category and body text bounds, line breaks in the body only), and what each entry declares about itself.
 */
import { describe, expect, it } from 'vitest';
import { type Operation } from '../../index.js';
import { accepted, callerOf, entryOf, json, none, refused } from '../../../../test/support/catalog/calls.js';

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
const reading = {
  method: 'GET',
  tag: 'News',
  timeout: 'read',
  read: 'cached',
  mutating: false,
  destructive: false,
  scope: 'webapi',
  paged: undefined,
};

describe('v2 PF4 news: what each entry declares', () => {
  it('declares the cached reads', () => {
    expect(declared(entry('NewsTotal'))).toStrictEqual({
      ...reading,
      path: '/api/v2/PF4/{tradePlatform}/NewsTotal',
      response: { type: 'integer', format: 'int32' },
      answer: { kind: 'custom' },
    });
    expect(declared(entry('NewsBodyGet'))).toStrictEqual({
      ...reading,
      path: '/api/v2/PF4/{tradePlatform}/NewsBodyGet/{key}',
      response: { type: 'string' },
      answer: { kind: 'custom' },
    });
    expect(declared(entry('NewsGet'))).toStrictEqual({
      ...reading,
      path: '/api/v2/PF4/{tradePlatform}/NewsGet',
      response: 'PF4NewsTopic[]',
      answer: { kind: 'cachedList', table: 'news' },
    });
    expect(declared(entry('NewsTopicGet'))).toStrictEqual({
      ...reading,
      path: '/api/v2/PF4/{tradePlatform}/NewsTopicGet/{pos}',
      response: 'PF4NewsTopic',
      answer: { kind: 'custom' },
    });
  });

  it('declares the body fetch a live POST in the change class that changes nothing (read scope)', () => {
    expect(declared(entry('NewsBodyRequest'))).toStrictEqual({
      ...reading,
      method: 'POST',
      path: '/api/v2/PF4/{tradePlatform}/NewsBodyRequest/{key}',
      response: { type: 'boolean' },
      timeout: 'change',
      read: 'live',
      answer: { kind: 'live', command: 'NewsBodyRequest', keyedRead: true },
    });
  });

  it('declares the send a live mutating POST in the change class (write scope), line breaks allowed in the body alone', () => {
    expect(declared(entry('NewsSend'))).toStrictEqual({
      ...reading,
      method: 'POST',
      path: '/api/v2/PF4/{tradePlatform}/NewsSend',
      response: { type: 'boolean' },
      timeout: 'change',
      read: 'live',
      mutating: true,
      scope: 'webapi.write',
      answer: { kind: 'live', command: 'NewsSend' },
    });
    expect(entry('NewsSend').controlCharacters).toStrictEqual({ 'body.body': 'lineBreaks' });
    expect(entry('NewsSend').bodyLimitBytes).toBeUndefined();
  });

  it('gives every news entry a summary sentence', () => {
    for (const name of ['NewsTotal', 'NewsBodyGet', 'NewsGet', 'NewsTopicGet', 'NewsBodyRequest', 'NewsSend'])
      expect(entry(name).summary, name).toMatch(/^[A-Z].{10,}[.)]$/);
  });
});

describe('v2 PF4 news: inputs', () => {
  it('NewsTotal and NewsGet take nothing', () => {
    expect(call('NewsTotal', {}, '?key=1')).toStrictEqual(accepted({}));
    expect(call('NewsGet', {}, '?limit=1')).toStrictEqual(accepted({}));
  });

  for (const name of ['NewsBodyGet', 'NewsBodyRequest']) {
    it(`${name} passes a news key of 0 to 2147483647 as a number`, () => {
      expect(call(name, { key: '0' }, '')).toStrictEqual(accepted({ key: 0 }));
      expect(call(name, { key: '2147483647' }, '')).toStrictEqual(accepted({ key: 2147483647 }));
    });

    it(`${name} refuses a negative key, one beyond int32 and one that is not a whole number`, () => {
      expect(call(name, { key: '-1' }, '')).toStrictEqual(refused('key: key must be at least 0'));
      expect(call(name, { key: '2147483648' }, '')).toStrictEqual(refused('key: key must be at most 2147483647'));
      expect(call(name, { key: '1.5' }, '')).toStrictEqual(refused('key: key must be an integer'));
    });
  }

  it('NewsTopicGet passes a zero-based position of 0 to 2147483647 as a number', () => {
    expect(call('NewsTopicGet', { pos: '0' }, '')).toStrictEqual(accepted({ pos: 0 }));
    expect(call('NewsTopicGet', { pos: '2147483647' }, '')).toStrictEqual(accepted({ pos: 2147483647 }));
  });

  it('NewsTopicGet refuses a negative position, one beyond int32 and one that is not a whole number', () => {
    expect(call('NewsTopicGet', { pos: '-1' }, '')).toStrictEqual(refused('pos: pos must be at least 0'));
    expect(call('NewsTopicGet', { pos: '2147483648' }, '')).toStrictEqual(
      refused('pos: pos must be at most 2147483647'),
    );
    expect(call('NewsTopicGet', { pos: 'first' }, '')).toStrictEqual(refused('pos: pos must be an integer'));
  });
});

describe('v2 PF4 news: NewsSend', () => {
  const send = (body: unknown) => call('NewsSend', {}, '', json(body));

  it('passes a topic of 1 and of 255 characters, a category of 63, a body of 65536 with tab and line breaks, and the priority', () => {
    expect(send({ topic: 't' })).toStrictEqual(accepted({ body: { topic: 't' } }));
    const body = 'Line one\r\nLine two\t'.padEnd(65_536, 'b');
    const full = { topic: 't'.repeat(255), category: 'c'.repeat(63), body, highPriority: true };
    expect(send(full)).toStrictEqual(accepted({ body: full }));
    expect(send({ topic: 't', category: null, body: null, highPriority: false })).toStrictEqual(
      accepted({ body: { topic: 't', category: null, body: null, highPriority: false } }),
    );
  });

  it('requires a topic of 1 to 255 characters', () => {
    for (const topic of [undefined, null, 5])
      expect(send({ topic, body: 'b' }), String(topic)).toStrictEqual(refused('body.topic: topic is required'));
    expect(send({ topic: '' })).toStrictEqual(refused('body.topic: topic must not be empty'));
    expect(send({ topic: 't'.repeat(256) })).toStrictEqual(refused('body.topic: topic must be at most 255 characters'));
  });

  it('bounds the category at 63 and the body at 65536 characters', () => {
    expect(send({ topic: 't', category: 'c'.repeat(64) })).toStrictEqual(
      refused('body.category: category must be at most 63 characters'),
    );
    expect(send({ topic: 't', category: 7 })).toStrictEqual(refused('body.category: category must be a string'));
    expect(send({ topic: 't', body: 'b'.repeat(65_537) })).toStrictEqual(
      refused('body.body: body must be at most 65536 characters'),
    );
    expect(send({ topic: 't', body: ['b'] })).toStrictEqual(refused('body.body: body must be a string'));
  });

  it('refuses control characters in the topic and category, and in the body all but tab and line breaks', () => {
    expect(send({ topic: 'a\nb' })).toStrictEqual(refused('body.topic: must not contain control characters'));
    expect(send({ topic: 't', category: 'a\tb' })).toStrictEqual(
      refused('body.category: must not contain control characters'),
    );
    expect(send({ topic: 't', body: 'bell\u0007' })).toStrictEqual(
      refused('body.body: must not contain control characters other than tab and line breaks'),
    );
  });

  it('keeps the request strict and needs a body', () => {
    expect(send({ topic: 't', keywords: 'k' })).toStrictEqual(refused('body: Unrecognized key: "keywords"'));
    expect(send({ topic: 't', highPriority: 'yes' })).toStrictEqual(
      refused('body.highPriority: Invalid input: expected boolean, received string'),
    );
    expect(call('NewsSend', {}, '', none)).toStrictEqual(
      refused('body: Invalid input: expected object, received undefined'),
    );
  });
});
