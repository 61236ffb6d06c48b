/** Hand-written handlers every family shares: the session ping. */
import { registryOperations } from '../../../shared/catalog/registry.js';
import { bind } from './bind.js';

export const commonBindings = [
  /** Round-trips a protocol `Ping` through the manager session, logging in first when the session is down. */
  bind(registryOperations.Ping, async (ctx) => {
    const started = performance.now();
    const answer = (await ctx.platform.session.request('Ping', undefined, ctx.deadline)) as { time?: unknown } | null;
    const roundTripMs = Math.round((performance.now() - started) * 1000) / 1000;
    const serverTime = answer && typeof answer.time === 'string' ? answer.time : null;
    return { data: { ok: true, roundTripMs, serverTime } };
  }),
];
