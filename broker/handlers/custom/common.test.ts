import { afterEach, describe, expect, it, vi } from 'vitest';
import { registryOperations } from '../../../shared/catalog/registry.js';
import { OperationError } from '../../../shared/errors.js';
import { commonBindings } from './common.js';
import { call, failureOf, platformOf, ScriptedSession, sent } from '../../../test/support/broker/handlers.js';

const ping = (session: ScriptedSession) =>
  call(commonBindings, registryOperations.Ping, platformOf('PF4', { session }));

afterEach(() => {
  vi.restoreAllMocks();
});

describe('Ping', () => {
  it('round-trips Ping without arguments under the call deadline, answering the round trip to the microsecond and the server time', async () => {
    vi.spyOn(performance, 'now').mockReturnValueOnce(1000.5).mockReturnValueOnce(1012.8456789);
    const session = new ScriptedSession().answers('Ping', { time: '2024-03-01T12:00:00Z', extra: 1 });
    expect(await ping(session)).toEqual({
      data: { ok: true, roundTripMs: 12.346, serverTime: '2024-03-01T12:00:00Z' },
    });
    expect(session.sent).toEqual([sent('Ping', undefined)]);
  });

  it('measures from before the request to after its answer', async () => {
    const now = vi.spyOn(performance, 'now').mockReturnValueOnce(5).mockReturnValueOnce(5.0004);
    const session = new ScriptedSession().answers('Ping', null);
    expect(await ping(session)).toEqual({ data: { ok: true, roundTripMs: 0, serverTime: null } });
    expect(now).toHaveBeenCalledTimes(2);
  });

  it('answers serverTime null unless the server answered a text time', async () => {
    for (const answer of [null, undefined, {}, { time: 1709294400 }, { time: null }, 'time']) {
      vi.spyOn(performance, 'now').mockReturnValueOnce(1).mockReturnValueOnce(3);
      const session = new ScriptedSession().answers('Ping', answer);
      expect(await ping(session), JSON.stringify(answer)).toEqual({
        data: { ok: true, roundTripMs: 2, serverTime: null },
      });
    }
    vi.spyOn(performance, 'now').mockReturnValueOnce(1).mockReturnValueOnce(1);
    expect(await ping(new ScriptedSession().answers('Ping', { time: '' }))).toEqual({
      data: { ok: true, roundTripMs: 0, serverTime: '' },
    });
  });

  it('fails as the session failed', async () => {
    const down = new OperationError('NoConnect', 'the manager session is closed');
    expect(await failureOf(() => ping(new ScriptedSession().fails('Ping', down)))).toBe(down);
  });
});
