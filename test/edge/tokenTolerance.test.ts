/**
 * One clock tolerance for a token's end, TOKEN_CLOCK_TOLERANCE_SECONDS (4 s here), through the real worker against a
 * scripted broker: a REST call with a token whose exp passed by more than the tolerance is refused `invalid_token`, one
 * within it is answered; a stream opened with a token past its exp but within the tolerance stays open when the
 * stream object checks its clients, and is ended (`closed`, `TokenExpired`) by the first check after exp plus the
 * same tolerance. The object's checks are run here (`recheck`), the periodic ones being an hour apart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PING_OP, SUBSCRIBE_OP, type PingReport } from '../../shared/frames.js';
import { objectCall } from '../../launcher/edge.js';
import { LOCAL_HOME, ORG_A, PF4_A, startTestEdge, type TestEdge } from '../support/edge.js';
import { SseReader } from '../support/sse.js';
import { until } from '../support/until.js';
import { startFakeBroker, type FakeBroker } from './gatewayFakeBroker.js';
import { streamObjectName } from '../../workers/streams/fanout.js';

/**
 * Long enough for the stream's checks within it on a loaded machine (they start just after a second begins, 1 s past
 * exp, so about 3 s are left for them); the stream test waits the rest of it out.
 */
const TOLERANCE_SECONDS = 4;
let edge: TestEdge;
let broker: FakeBroker;

beforeAll(async () => {
  broker = await startFakeBroker();
  const report: PingReport = { broker: 'fake', draining: false, platform: 'up' };
  broker.script.set(PING_OP, { reply: { ok: true, data: report } });
  broker.script.set(SUBSCRIBE_OP, { reply: { ok: true, data: { sub: 1 } } });
  edge = await startTestEdge({
    vars: {
      BROKER_URL: broker.url,
      TOKEN_CLOCK_TOLERANCE_SECONDS: String(TOLERANCE_SECONDS),
      REGISTRY_CACHE_SECONDS: '3600',
    },
  });
}, 60_000);
afterAll(async () => {
  await edge?.close();
  await broker?.close();
});

const nowSeconds = () => Math.floor(Date.now() / 1000);
/** A token of client-a (ORG_A) whose exp is `exp` (epoch seconds). */
const tokenEnding = (exp: number) => edge.token({ client_id: 'client-a' }, { expiresIn: exp });

async function organizations(token: string) {
  const res = await fetch(new URL('/api/Organizations', edge.url), { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: (await res.json()) as unknown, challenge: res.headers.get('www-authenticate') };
}

const EXPIRED = { error: 'invalid_token', error_description: 'the access token expired' };

describe('a token past its exp', () => {
  it('is refused on REST once exp plus the tolerance has passed, and answered within it', async () => {
    const late = await organizations(await tokenEnding(nowSeconds() - TOLERANCE_SECONDS - 5));
    expect(late).toEqual({
      status: 401,
      body: EXPIRED,
      challenge: 'Bearer realm="webapi", error="invalid_token", error_description="the access token expired"',
    });
    const within = await organizations(await tokenEnding(nowSeconds() - 2));
    expect(within.status).toBe(200);
    expect(within.body).toEqual([expect.objectContaining({ id: ORG_A, name: 'Org A' })]);
  });

  it('keeps a stream open within the tolerance and ends it at exp plus the same tolerance', async () => {
    // Starts at the beginning of a second: the token is then just over one second past its exp, not up to two.
    const second = nowSeconds();
    await until(() => nowSeconds() > second, 'the next second');
    const exp = nowSeconds() - 1;
    const token = await tokenEnding(exp);
    const sse = await SseReader.open(new URL(`/api/v2/PF4/${PF4_A}/Stream?ticks`, edge.url).toString(), token);
    try {
      expect(sse.status).toBe(200);
      // Past exp, within the tolerance: the object's check ends nothing, and REST still answers the token.
      expect(
        await objectCall<number>(edge.miniflare, 'STREAMS', streamObjectName(PF4_A, LOCAL_HOME.region, 0), 'recheck'),
      ).toBe(0);
      expect((await organizations(token)).status).toBe(200);
      expect(sse.ended).toBe(false);
      expect(sse.of('closed')).toEqual([]);

      // Wait on the clock itself: until exp plus the tolerance has passed.
      await until(() => Date.now() > (exp + TOLERANCE_SECONDS) * 1000 + 100, 'exp plus the tolerance to pass', 30_000);
      expect(
        await objectCall<number>(edge.miniflare, 'STREAMS', streamObjectName(PF4_A, LOCAL_HOME.region, 0), 'recheck'),
      ).toBe(1);
      await until(() => sse.ended, 'the stream to end');
      expect(sse.events.at(-1)?.event).toBe('closed');
      expect(JSON.parse(sse.events.at(-1)!.data)).toEqual({
        code: 'TokenExpired',
        message: 'the access token expired: reconnect with a new token',
      });
      // REST refuses it alike now.
      expect((await organizations(token)).body).toEqual(EXPIRED);
    } finally {
      await sse.close();
    }
  }, 60_000);
});
