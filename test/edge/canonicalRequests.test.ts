/**
 * One call, however it is spelled, through the real worker and a scripted broker: an Idempotency-Key retry with the
 * platform uuid in upper case, another key order or another query order replays the first answer instead of being
 * refused as a different request, while a different value is still refused; and text with control characters or
 * lone surrogates is refused at the edge, naming the field, before any frame reaches the broker.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { PF4_A, type TestEdge } from '../support/edge.js';
import { edgeWithFakeBroker, type FakeBroker } from './gatewayFakeBroker.js';

let edge: TestEdge;
let broker: FakeBroker;
let token: string;
const setup = edgeWithFakeBroker();
beforeAll(() => {
  ({ edge, broker, token } = setup);
});

async function send(method: string, path: string, body?: string, headers: Record<string, string> = {}) {
  const res = await fetch(new URL(path, edge.url), {
    method,
    body,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
  });
  return { status: res.status, replayed: res.headers.get('idempotency-replayed'), text: await res.text() };
}

describe('the Idempotency-Key fingerprint is canonical', () => {
  it('replays a retry that spells the platform uuid in upper case, orders body members or query parameters otherwise', async () => {
    broker.script.set('PF4.UserRecordNew', {
      reply: (f) => ({ ok: true, data: { login: 77, ...(f.args.body as object) } }),
    });
    const key = randomUUID();
    const first = await send(
      'POST',
      `/api/v2/PF4/${PF4_A}/UserRecordNew?requestTimeout=5`,
      '{"group":"demo","name":"Canon"}',
      { 'idempotency-key': key },
    );
    expect(JSON.parse(first.text)).toMatchObject({ error: null, data: { login: 77 } });
    const spellings = [
      `/api/v2/PF4/${PF4_A.toUpperCase()}/UserRecordNew`,
      `/api/v2/PF4/${PF4_A.toUpperCase()}/UserRecordNew?requestTimeout=9`,
    ];
    for (const path of spellings) {
      const retry = await send('POST', path, '{ "name": "Canon", "group": "demo" }', { 'idempotency-key': key });
      expect(retry.replayed, path).toBe('true');
      expect(retry.text).toBe(first.text);
    }
    expect(broker.framesFor('PF4.UserRecordNew')).toHaveLength(1);
    const other = await send(
      'POST',
      `/api/v2/PF4/${PF4_A.toUpperCase()}/UserRecordNew`,
      '{"group":"demo","name":"Other"}',
      { 'idempotency-key': key },
    );
    expect(JSON.parse(other.text).error).toMatchObject({
      code: 'Validation',
      message: 'Idempotency-Key: already used with a different request',
    });
  });

  it('takes a path parameter as its validated value: login 007 is login 7', async () => {
    broker.script.set('PF4.UserPasswordSet', { reply: { ok: true, data: true } });
    const key = randomUUID();
    const path = (login: string) => `/api/v2/PF4/${PF4_A}/UserPasswordSet/${login}`;
    const first = await send('POST', path('7'), '"S3cret!pass"', { 'idempotency-key': key });
    expect(JSON.parse(first.text)).toMatchObject({ error: null });
    const retry = await send('POST', path('007'), '"S3cret!pass"', { 'idempotency-key': key });
    expect(retry.replayed).toBe('true');
    expect(broker.framesFor('PF4.UserPasswordSet')).toHaveLength(1);
  });
});

describe('text inputs at the edge', () => {
  it('refuses control characters and lone surrogates before the broker sees the call', async () => {
    const v2 = `/api/v2/PF4/${PF4_A}`;
    const nul = await send('POST', `${v2}/UserRecordNew`, JSON.stringify({ group: 'demo', name: 'a\u0000b' }));
    expect(JSON.parse(nul.text).error).toMatchObject({
      code: 'Validation',
      message: 'body.name: must not contain control characters',
    });
    const lone = await send('POST', `${v2}/UserRecordNew`, '{"group":"demo","name":"a\\ud800b"}');
    expect(JSON.parse(lone.text).error).toMatchObject({
      code: 'Validation',
      message: 'body.name: must be well-formed Unicode text (it holds a lone surrogate)',
    });
    const symbol = await send('GET', `${v2}/TickInfoLast/EUR%01USD`);
    expect(JSON.parse(symbol.text).error).toMatchObject({
      code: 'Validation',
      message: 'symbol: must not contain control characters',
    });
    const v1 = await send('GET', `/api/PF4/${PF4_A}/UserRecordGet/5?x=%00`);
    expect(v1.status).toBe(200); // an undeclared query parameter is ignored, not passed on
    expect(broker.framesFor('PF4.UserRecordNew')).toHaveLength(0);
    expect(broker.framesFor('PF4.TickInfoLastSymbol')).toHaveLength(0);
  });
});
