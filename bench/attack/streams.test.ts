/**
 * Attack 1's figures (bench/attack/streams.ts): from what an SSE stream and a hub socket received and when, how long
 * after the cause each was ended, with what, and what came before and after.
 */
import { describe, expect, it } from 'vitest';
import { streamFigures } from './streams.js';

const sse = (events: Array<[number, string, string]>, endedAt: number | null) => ({
  events: events.map(([at, event, data]) => ({ at, value: { event, data } })),
  endedAt,
});
const hub = (received: Array<[number, Record<string, unknown>]>, closeFrameAt: number | null) => ({
  received: received.map(([at, value]) => ({ at, value })),
  closeFrameAt,
});
const tick = { type: 1, target: 'OnTick', arguments: [{ symbol: 'EURUSD' }] };
const item = { type: 2, invocationId: 'all-ticks', item: {} };

describe('stream figures', () => {
  it('times each end from the cause and counts what came between', () => {
    const figures = streamFigures(
      sse(
        [
          [500, 'message', '1'],
          [1200, 'message', '2'],
          [1500, 'message', '3'],
          [5700, 'closed', '{"code":"ClientRevoked"}'],
        ],
        5710,
      ),
      hub(
        [
          [100, {}],
          [900, tick],
          [1300, item],
          [2000, tick],
          [3000, { type: 6 }],
          [5705, { type: 7, error: 'ClientRevoked: the client is disabled', allowReconnect: false }],
        ],
        5750,
      ),
      1000,
    );
    expect(figures).toStrictEqual({
      sseClosedMs: 4700,
      sseCode: 'ClientRevoked',
      sseBeforeClose: 2,
      sseAfterClose: 0,
      sseEndedMs: 4710,
      hubCloseMessageMs: 4705,
      hubError: 'ClientRevoked: the client is disabled',
      hubReconnect: false,
      hubCloseFrameMs: 4750,
      hubBeforeClose: 2,
      hubAfterClose: 0,
    });
  });

  it('counts what came after the close', () => {
    const figures = streamFigures(
      sse(
        [
          [2000, 'closed', '{}'],
          [2100, 'message', 'late'],
        ],
        2200,
      ),
      hub(
        [
          [1500, tick],
          [2000, { type: 7, error: 'TokenExpired', allowReconnect: true }],
          [2050, tick],
          [2060, { type: 6 }],
        ],
        2300,
      ),
      1000,
    );
    expect(figures).toMatchObject({
      sseClosedMs: 1000,
      sseCode: '?',
      sseBeforeClose: 0,
      sseAfterClose: 1,
      hubReconnect: true,
      hubBeforeClose: 1,
      hubAfterClose: 2,
    });
  });

  it('has no times for streams that were not ended, and counts every tick after the cause as after', () => {
    const figures = streamFigures(
      sse(
        [
          [900, 'message', '0'],
          [1100, 'message', '1'],
        ],
        null,
      ),
      hub(
        [
          [900, tick],
          [1100, tick],
          [1200, item],
        ],
        null,
      ),
      1000,
    );
    expect(figures).toStrictEqual({
      sseClosedMs: null,
      sseCode: null,
      sseBeforeClose: 1,
      sseAfterClose: 0,
      sseEndedMs: null,
      hubCloseMessageMs: null,
      hubError: undefined,
      hubReconnect: undefined,
      hubCloseFrameMs: null,
      hubBeforeClose: 2,
      hubAfterClose: 2,
    });
  });
});
