/**
 * Keep-alive rules ("Keep-alive", docs/manager-protocol.md): Ping answers `{time}` (an ISO date-time) within the
 * broker's ping bound; a Ping sent right behind the login is answered while the snapshot streams, and the connection
 * never falls silent for a ping bound before that answer (the broker asks again when any frame came, and takes a
 * silent connection for dead); ServerTime answers an ISO date-time.
 */
import { show, type Answer } from '../connection.js';
import { failed, passed, skipped, type Rule } from '../context.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

function isoProblem(value: unknown, what: string): string | undefined {
  if (typeof value !== 'string' || !ISO.test(value) || !Number.isFinite(Date.parse(value))) {
    return `${what}: expected an ISO 8601 date-time, got ${show(value, 60)}`;
  }
  return undefined;
}

function pingProblem(answer: Answer): string | undefined {
  if (answer.kind === 'error') return `Ping: expected {time}, got error ${show(answer.error)}`;
  const value = answer.value as { time?: unknown } | null;
  if (typeof value !== 'object' || value === null) return `Ping: expected {time}, got ${show(value)}`;
  return isoProblem(value.time, 'Ping time');
}

export const livenessRules: Rule[] = [
  {
    id: 'ping.answer',
    name: 'Ping is answered {time} within the ping bound',
    timeoutMs: (t) => t.pingMs + 1000,
    async run(ctx) {
      const main = ctx.requireMain();
      const started = performance.now();
      const answer = await main.connection.request('Ping', undefined, ctx.timeouts.pingMs);
      const problem = pingProblem(answer);
      return problem ? failed(problem) : passed(`answered in ${Math.round(performance.now() - started)} ms`);
    },
  },
  {
    id: 'ping.during-snapshot',
    name: 'a Ping sent with the login is answered, the connection never silent for the ping bound before it',
    timeoutMs: (t) => t.pingMs + 1000,
    async run(ctx) {
      const main = ctx.requireMain();
      const state = main.pingDuringSnapshot;
      const connection = main.connection;
      await connection
        .waitFor(
          () => state.answer !== undefined || state.error !== undefined || connection.closed,
          ctx.timeouts.pingMs,
          'answer to the Ping sent with the login',
        )
        .catch(() => {});
      if (!state.answer)
        return failed(
          `the Ping sent with the login: ${state.error ?? `not answered within ${ctx.timeouts.pingMs} ms of the snapshot's end`}`,
        );
      const problem = pingProblem(state.answer);
      if (problem) return failed(problem);
      const answeredAt = state.answer.frame.at;
      let last = state.sentAt;
      let longest = 0;
      for (const frame of connection.frames) {
        if (frame.at < state.sentAt || frame.at > answeredAt) continue;
        longest = Math.max(longest, frame.at - last);
        last = frame.at;
      }
      if (longest > ctx.timeouts.pingMs) {
        return failed(
          `expected a frame at least every ${ctx.timeouts.pingMs} ms until the Ping's answer; the connection was silent for ${Math.round(longest)} ms`,
        );
      }
      const where =
        state.answer.frame.seq < main.snapshot.endSeq ? "before the snapshot's end" : "after the snapshot's end";
      return passed(
        `answered ${where}, ${Math.round(answeredAt - state.sentAt)} ms after it was sent; longest silence ${Math.round(longest)} ms`,
      );
    },
  },
  {
    id: 'ping.server-time',
    name: 'ServerTime is answered an ISO date-time',
    timeoutMs: (t) => t.answerMs + 1000,
    async run(ctx) {
      const main = ctx.requireMain();
      if (!ctx.declared.includes('ServerTime')) return skipped('ServerTime not declared');
      const answer = await main.connection.request('ServerTime', undefined, ctx.timeouts.answerMs);
      if (answer.kind === 'error')
        return failed(`ServerTime: expected an ISO date-time, got error ${show(answer.error)}`);
      const problem = isoProblem(answer.value, 'ServerTime');
      return problem ? failed(problem) : passed(String(answer.value));
    },
  },
];
