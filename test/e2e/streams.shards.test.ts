/**
 * Stream objects shared out per platform (STREAM_SHARDS=3) and the hub's flow control, end to end (simulator, broker,
 * edge in workerd): clients spread over the platform's objects (event ids name their object), each gets the ticks and
 * a trade opened through the API, and a reconnect with Last-Event-ID returns to its object and gets what it missed
 * rather than a resync. A hub socket that asked for flow checks (EnableFlowControl) and stops reading answers no
 * OnFlowCheck: its object counts it slow, and once it reads again it answers, is no longer slow, and its ticks flow
 * again.
 */
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { SseReader } from '../support/sse.js';
import { openTrade as openTestTrade } from './v2/api.js';
import { eventually, stackForFile } from './support.js';
import { objectCall } from '../../launcher/edge.js';
import { LOCAL_HOME } from '../support/edge.js';
import { streamObjectName } from '../../workers/streams/fanout.js';

const SHARDS = 3;
const setup = stackForFile({ edgeVars: { STREAM_SHARDS: String(SHARDS) } });
const streamUrl = (query: string) => `${setup.client.stack.edgeUrl}${setup.client.v2pf4}/Stream?${query}`;

type Stats = { sse: number; hubs: number; slowHubs: number; epoch: string };
async function shardStats(n: number): Promise<Stats> {
  const c = setup.client;
  return objectCall<Stats>(
    c.stack.edge.miniflare,
    'STREAMS',
    streamObjectName(c.stack.platforms.pf4, LOCAL_HOME.region, n),
    'stats',
  );
}

const openTrade = async (comment: string) => (await openTestTrade(setup.client, comment)).order;

describe('STREAM_SHARDS=3', () => {
  it('spreads clients over the objects, each delivering ticks and trades, and a reconnect returns to its object', async () => {
    const readers: SseReader[] = [];
    try {
      // Enough clients that every object gets some (a random draw each: 24 miss one object with odds of 3 * (2/3)^24).
      for (let i = 0; i < 24; i++)
        readers.push(await SseReader.open(streamUrl('ticks=EURUSD&trades'), setup.client.token));
      await eventually(() => Promise.resolve(readers.every((r) => r.of('ticks').length >= 1)), 20_000);
      const prefixes = new Set(readers.map((r) => r.lastEventId!.slice(0, 2)));
      expect([...prefixes].sort()).toEqual(['00', '01', '02']);
      const perShard = await Promise.all(Array.from({ length: SHARDS }, (_, n) => shardStats(n)));
      expect(perShard.map((s) => s.sse).reduce((a, b) => a + b, 0)).toBe(24);
      expect(perShard.map((s) => s.epoch.slice(0, 2))).toEqual(['00', '01', '02']);

      const order = await openTrade('sharded');
      await eventually(
        () => Promise.resolve(readers.every((r) => r.of('trades').some((e) => JSON.parse(e.data).order === order))),
        15_000,
      );

      // One client leaves, a trade happens, it comes back with its last id: the object that numbered it answers.
      const leaver = readers.find((r) => r.lastEventId!.startsWith('02'))!;
      const lastSeen = leaver.lastEventId!;
      await leaver.close();
      const missed = await openTrade('while-away');
      const back = await SseReader.open(streamUrl('ticks=EURUSD&trades'), setup.client.token, lastSeen);
      readers.push(back);
      await eventually(
        () => Promise.resolve(back.of('trades').some((e) => JSON.parse(e.data).order === missed)),
        15_000,
      );
      expect(back.of('resync')).toEqual([]);
      expect(back.lastEventId!.slice(0, 2)).toBe('02');
    } finally {
      await Promise.all(readers.map((r) => r.close()));
    }
  });
});

describe('hub flow control', () => {
  it('counts a socket that asked for flow checks and stops reading as slow, and lets its ticks flow again once it reads and answers', async () => {
    const c = setup.client;
    const ws = new WebSocket(
      `${c.stack.edgeUrl.replace('http', 'ws')}/hubs/pf4/v2?tradePlatform=${c.stack.platforms.pf4}&access_token=${c.token}`,
    );
    const ticks: number[] = [];
    let probes = 0;
    ws.on('message', (data) => {
      for (const text of (data as Buffer).toString().split('\u001e').filter(Boolean)) {
        const m = JSON.parse(text);
        if (m.target === 'OnTick') ticks.push(Date.parse(m.arguments[0].lastTime));
        if (m.type === 1 && m.target === 'OnFlowCheck' && m.invocationId) {
          probes++;
          ws.send(JSON.stringify({ type: 3, invocationId: m.invocationId, result: null }) + '\u001e');
        }
      }
    });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    try {
      ws.send(JSON.stringify({ protocol: 'json', version: 1 }) + '\u001e');
      ws.send(JSON.stringify({ type: 1, invocationId: 'flow', target: 'EnableFlowControl', arguments: [] }) + '\u001e');
      for (const s of ['EURUSD', 'GBPUSD', 'USDJPY'])
        ws.send(JSON.stringify({ type: 1, target: 'SubscribeToTicks', arguments: [s] }) + '\u001e');
      await eventually(() => Promise.resolve(ticks.length >= 3 && probes >= 1), 15_000);
      const slowNow = async () => {
        const all = await Promise.all(Array.from({ length: SHARDS }, (_, n) => shardStats(n)));
        return all.reduce((n, s) => n + s.slowHubs, 0);
      };
      expect(await slowNow()).toBe(0);
      ws.pause();
      await eventually(async () => (await slowNow()) === 1, 15_000);
      const before = ticks.length;
      ws.resume();
      await eventually(async () => (await slowNow()) === 0, 15_000);
      // Flowing again: ticks stamped after the socket was found fast again arrive.
      const fastAgain = Date.now();
      await eventually(() => Promise.resolve(ticks.some((t) => t >= fastAgain)), 15_000);
      expect(ticks.length).toBeGreaterThan(before);
    } finally {
      ws.terminate();
    }
  });
});
