/**
 * Attacks on streams: 1, an SSE stream and a hub socket of a client that is disabled, and of a token that expires
 * (how long until each is ended, and what arrived after); 4, 200 hub sockets that never send the handshake; 5, 600
 * SubscribeToTicks on one socket.
 */
import { decodeJwt } from 'jose';
import { tokenExpiringIn, type Stack } from '../../launcher/stack.js';
import { newClient } from './clients.js';
import { progress, type Drill } from './drill.js';
import { seconds, summarize } from './figures.js';
import { getJson } from './http.js';
import { STREAM_END_BOUND_MS, TOLERANCE_MS } from './settings.js';
import { sleep, until } from './waiting.js';
import { closedEventOf, closeMessageOf, HubWatch, SseWatch, ticksOf } from './watchers.js';

// 1. Streams after disable and after expiry

const sseUrl = (stack: Stack) => `${stack.edgeUrl}/api/v2/PF4/${stack.platforms.pf4}/Stream?ticks`;

async function openStreams(stack: Stack, token: string): Promise<{ sse: SseWatch; hub: HubWatch }> {
  const sse = await SseWatch.open(sseUrl(stack), token);
  if (sse.status !== 200) throw new Error(`SSE stream answered ${sse.status}`);
  const hub = await HubWatch.open(stack.edgeUrl, token, { handshake: true, platform: stack.platforms.pf4 });
  hub.send({ type: 4, invocationId: 'all-ticks', target: 'StreamTicks', arguments: [] });
  hub.send({ type: 1, invocationId: 'eurusd', target: 'SubscribeToTicks', arguments: ['EURUSD'] });
  const flowing = await until(() => sse.events.length > 0 && hub.ticks().length > 0, 15_000);
  if (!flowing)
    throw new Error(`streams not flowing: ${sse.events.length} SSE events, ${hub.ticks().length} hub ticks`);
  return { sse, hub };
}

/** What the streams did from `from` (the cause) on: when each was ended and how, and what came before and after. */
export function streamFigures(
  sse: Pick<SseWatch, 'events' | 'endedAt'>,
  hub: Pick<HubWatch, 'received' | 'closeFrameAt'>,
  from: number,
) {
  const closed = closedEventOf(sse.events);
  const closeMessage = closeMessageOf(hub.received);
  const sseAfterCause = sse.events.filter((e) => e.at >= from && e.value.event !== 'closed');
  const hubAfterCause = ticksOf(hub.received).filter((t) => t.at >= from);
  return {
    sseClosedMs: closed ? closed.at - from : null,
    sseCode: closed ? ((JSON.parse(closed.value.data) as { code?: string }).code ?? '?') : null,
    sseBeforeClose: sseAfterCause.filter((e) => !closed || e.at <= closed.at).length,
    sseAfterClose: closed ? sse.events.filter((e) => e.at > closed.at).length : 0,
    sseEndedMs: sse.endedAt === null ? null : sse.endedAt - from,
    hubCloseMessageMs: closeMessage ? closeMessage.at - from : null,
    hubError: closeMessage?.value.error as string | undefined,
    hubReconnect: closeMessage?.value.allowReconnect as boolean | undefined,
    hubCloseFrameMs: hub.closeFrameAt === null ? null : hub.closeFrameAt - from,
    hubBeforeClose: hubAfterCause.filter((t) => !closeMessage || t.at <= closeMessage.at).length,
    hubAfterClose: closeMessage ? hub.received.filter((r) => r.at > closeMessage.at).length : hubAfterCause.length,
  };
}

export async function attackStreams(drill: Drill): Promise<void> {
  const { stack, edgeUrl } = drill;
  progress('1: streams after disable and after expiry');
  const disabled = await newClient(stack, 'revoked');
  const expiring = await newClient(stack, 'expiring');
  // A token of the second client as the token endpoint would issue it with TOKEN_TTL_SECONDS=9.
  const shortToken = await tokenExpiringIn(stack, expiring.token, 9);
  // The end of the token at the edge: its exp plus the clock tolerance, for REST and streams alike.
  const exp = decodeJwt(shortToken).exp! * 1000 + TOLERANCE_MS;
  const [a, b] = await Promise.all([openStreams(stack, disabled.token), openStreams(stack, shortToken)]);

  const restProbe = async (token: string, from: number, untilMs: number): Promise<number | null> => {
    while (Date.now() < untilMs) {
      const r = await getJson(edgeUrl, `/api/v2/PF4/${stack.platforms.pf4}/ServerTime`, token);
      if (r.status === 401) return Date.now() - from;
      await sleep(100);
    }
    return null;
  };
  const db = await stack.edge.db();
  const disabledAt = Date.now();
  await db.prepare('UPDATE api_clients SET disabled = 1 WHERE client_id = ?').bind(disabled.clientId).run();
  const [restRevoked, restExpired] = await Promise.all([
    restProbe(disabled.token, disabledAt, disabledAt + 15_000),
    (async () => {
      await sleep(Math.max(0, exp - Date.now() - 200));
      return restProbe(shortToken, exp, exp + 12_000);
    })(),
  ]);
  // 15 s after the disable, 10 s after the expiry.
  await sleep(Math.max(0, disabledAt + 15_000 - Date.now(), exp + 10_000 - Date.now()));
  const revoked = streamFigures(a.sse, a.hub, disabledAt);
  const expired = streamFigures(b.sse, b.hub, exp);
  for (const s of [a, b]) {
    s.sse.close();
    s.hub.terminate();
  }

  const describe = (f: ReturnType<typeof streamFigures>, rest: number | null, restWatchedMs: number) =>
    `SSE \`closed\` ${f.sseCode ?? 'none'} after ${seconds(f.sseClosedMs)} (${f.sseBeforeClose} events before it, ${f.sseAfterClose} after, stream ended ${seconds(f.sseEndedMs)}); ` +
    `hub Close "${f.hubError ?? 'none'}" allowReconnect ${String(f.hubReconnect)} after ${seconds(f.hubCloseMessageMs)}, close frame ${seconds(f.hubCloseFrameMs)} ` +
    `(${f.hubBeforeClose} ticks before it, ${f.hubAfterClose} messages after); ` +
    (rest === null
      ? `REST (ServerTime) still answered ${seconds(restWatchedMs)} after`
      : `REST (ServerTime) refused after ${seconds(rest)}`);
  const within = (v: number | null) => v !== null && v <= STREAM_END_BOUND_MS;
  drill.found({
    id: '1a',
    title: `SSE stream + hub socket, client disabled (15 s watched; bound ${seconds(STREAM_END_BOUND_MS)})`,
    figures: describe(revoked, restRevoked, 15_000),
    held:
      revoked.sseCode === 'ClientRevoked' &&
      within(revoked.sseClosedMs) &&
      revoked.sseAfterClose === 0 &&
      (revoked.hubError ?? '').startsWith('ClientRevoked') &&
      within(revoked.hubCloseMessageMs) &&
      within(revoked.hubCloseFrameMs) &&
      revoked.hubAfterClose === 0,
  });
  drill.found({
    id: '1b',
    title: `SSE stream + hub socket, token expired (10 s watched from exp + ${seconds(TOLERANCE_MS)} of clock tolerance; bound ${seconds(STREAM_END_BOUND_MS)})`,
    figures: describe(expired, restExpired, 12_000),
    held:
      expired.sseCode === 'TokenExpired' &&
      within(expired.sseClosedMs) &&
      expired.sseAfterClose === 0 &&
      (expired.hubError ?? '').startsWith('TokenExpired') &&
      expired.hubReconnect === true &&
      within(expired.hubCloseMessageMs) &&
      within(expired.hubCloseFrameMs) &&
      expired.hubAfterClose === 0,
  });
}

// 4. 200 silent hub sockets

export async function attackSilentSockets(drill: Drill): Promise<() => Promise<void>> {
  const { stack, edgeUrl } = drill;
  progress('4: 200 hub sockets that never send the handshake (watched 30 s)');
  const client = await newClient(stack, 'silent');
  const hubs: HubWatch[] = [];
  const failures: string[] = [];
  for (let batch = 0; batch < 10; batch++) {
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        try {
          hubs.push(await HubWatch.open(edgeUrl, client.token, { handshake: false, platform: stack.platforms.pf4 }));
        } catch (error) {
          failures.push(String((error as Error).message));
        }
      }),
    );
  }
  const lastOpened = Math.max(...hubs.map((h) => h.openedAt));
  // The caller goes on with other attacks; this reports once 30 s passed for the last socket.
  return async () => {
    await sleep(Math.max(0, lastOpened + 30_500 - Date.now()));
    const by = (limitMs: number, at: (h: HubWatch) => number | null) =>
      hubs.filter((h) => {
        const t = at(h);
        return t !== null && t - h.openedAt <= limitMs;
      }).length;
    const message = (h: HubWatch) => h.closeMessage()?.at ?? null;
    const frame = (h: HubWatch) => h.closeFrameAt;
    const messages = new Set(hubs.map((h) => h.closeMessage()?.value.error).filter(Boolean));
    const other = hubs.filter((h) => h.received.some((r) => r.value.type !== 7)).length;
    const delays = hubs
      .map((h) => message(h))
      .map((t, i) => (t === null ? null : t - hubs[i].openedAt))
      .filter((t): t is number => t !== null);
    const spread = summarize(delays);
    for (const h of hubs) h.terminate();
    drill.found({
      id: '4',
      title: `${hubs.length} hub sockets that never send the handshake${failures.length ? ` (${failures.length} did not open: ${failures[0]})` : ''}`,
      figures:
        `Close message by 16 s ${by(16_000, message)}, by 30 s ${by(30_000, message)}; close frame by 16 s ${by(16_000, frame)}, by 30 s ${by(30_000, frame)}; ` +
        `Close message after p50 ${seconds(spread.p50)}, max ${seconds(spread.max)} from the socket's open; ` +
        `messages ${[...messages].map((m) => `"${m}"`).join(', ') || 'none'}; sockets sent anything else: ${other}`,
      held: hubs.length === 200 && by(30_000, message) === 200 && by(30_000, frame) === 200 && other === 0,
    });
  };
}

// 5. 600 subscriptions on one socket

export async function attackSubscriptions(drill: Drill): Promise<void> {
  const { stack, edgeUrl } = drill;
  progress('5: 600 SubscribeToTicks on one socket');
  const client = await newClient(stack, 'subscriber');
  const hub = await HubWatch.open(edgeUrl, client.token, { handshake: true, platform: stack.platforms.pf4 });
  const started = Date.now();
  for (let i = 0; i < 600; i++)
    hub.send({ type: 1, invocationId: `s${i}`, target: 'SubscribeToTicks', arguments: [`SYM${i}`] });
  await until(() => hub.completion('s599') !== undefined, 20_000);
  const answeredIn = Date.now() - started;
  const completions = Array.from({ length: 600 }, (_, i) => hub.completion(`s${i}`));
  const admitted = completions.filter((c) => c && c.error === undefined && c.result === null).length;
  const bound =
    'SubscribeToTicks: at most 256 symbols per connection: unsubscribe one first, or stream every symbol with StreamTicks';
  const refused = completions.filter((c) => c?.error === bound).length;
  const otherErrors = new Set(
    completions.filter((c) => c?.error !== undefined && c?.error !== bound).map((c) => c!.error),
  );
  const unanswered = completions.filter((c) => c === undefined).length;
  // Afterwards: room made, a subscription of a real symbol answered, and its ticks come.
  hub.send({ type: 1, invocationId: 'drop', target: 'UnsubscribeFromTicks', arguments: ['SYM0'] });
  hub.send({ type: 1, invocationId: 'after', target: 'SubscribeToTicks', arguments: ['EURUSD'] });
  const answered = await until(() => hub.completion('after') !== undefined, 10_000);
  const ticking = await until(
    () => hub.received.some((r) => r.value.target === 'OnTick' && r.value.arguments?.[0]?.symbol === 'EURUSD'),
    15_000,
  );
  const closed = hub.closeFrameAt !== null;
  hub.terminate();
  drill.found({
    id: '5',
    title: '600 SubscribeToTicks (600 symbols) on one socket',
    figures:
      `all answered in ${seconds(answeredIn)}: ${admitted} admitted, ${refused} refused with "${bound.split(':').slice(0, 2).join(':')}", ` +
      `${otherErrors.size ? `other errors ${[...otherErrors].join(' | ')}, ` : ''}${unanswered} unanswered; afterwards a subscription ` +
      `${answered ? `answered ${JSON.stringify(hub.completion('after'))}` : 'not answered'}, EURUSD ticks ${ticking ? 'arriving' : 'not arriving'}, socket ${closed ? 'closed' : 'open'}`,
    held:
      admitted === 256 &&
      refused === 344 &&
      unanswered === 0 &&
      answered &&
      hub.completion('after')?.result === null &&
      ticking &&
      !closed,
  });
}
