/** Handlers every family shares: the session ping and the server clock. */
import type { HandlerContext, HandlerResult, HandlerTable } from './handler.js';

/** Round-trips a protocol `Ping` through the manager session, logging in first when the session is down. */
async function ping(ctx: HandlerContext): Promise<HandlerResult> {
  const started = performance.now();
  const answer = (await ctx.platform.session.request('Ping', undefined, ctx.deadline)) as { time?: unknown } | null;
  const roundTripMs = Math.round((performance.now() - started) * 1000) / 1000;
  const serverTime = answer && typeof answer.time === 'string' ? answer.time : null;
  return { data: { ok: true, roundTripMs, serverTime } };
}

/** Live server time, an ISO 8601 string. */
export async function serverTime(ctx: HandlerContext): Promise<HandlerResult> {
  return { data: await ctx.platform.session.request('ServerTime', undefined, ctx.deadline) };
}

export const commonHandlers: HandlerTable = {
  Ping: ping,
};
