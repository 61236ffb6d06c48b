/**
 * Answer rules ("Frames", docs/manager-protocol.md): concurrent requests with ids of any size up to 15 digits are
 * each answered once with their own id; and, over every answer the suite received on every connection (run at the
 * end), exactly one answer per request, `id` written first (the broker reads an oversized answer's id from its first
 * 64 bytes), and every error `{code: integer of the family's table, message: string}`.
 */
import { show } from '../connection.js';
import { failed, passed, type Rule } from '../context.js';
import { probeArgs } from '../commands.js';
import { RESULT_CODES } from '../families.js';
import { codeText, joined } from './expect.js';

/** What the broker matches in an answer's first 64 bytes. */
const ID_FIRST = /^\s*\{\s*"id"\s*:\s*\d{1,15}\s*,\s*"(result|error)"/;

/** Harmless reads to mix into the concurrent requests, when declared. */
const MIXED_READS = [
  'ServerTime',
  'UserRecordRequest',
  'UserRequest',
  'SymbolsRequest',
  'GroupsRequest',
  'TimeGet',
  'ManagerCommon',
  'NewsTotal',
];

export const answerRules: Rule[] = [
  {
    id: 'answers.concurrent',
    name: 'concurrent requests are all answered, each once, with its own id',
    timeoutMs: (t) => 3 * t.answerMs,
    async run(ctx) {
      const { connection } = await ctx.openLoggedIn(false);
      const commands = ['Ping', ...MIXED_READS.filter((cmd) => ctx.declared.includes(cmd))];
      // Ids out of order and of every size the broker may use (it numbers from 1 and never starts again).
      const ids = Array.from(
        { length: 24 },
        (_, i) => [7 + i, 999_999_999_999_999 - i * 1_000_003, 2 ** 40 + i * 13][i % 3],
      );
      const sent = ids.map((id, i) => ({ id, cmd: commands[i % commands.length] }));
      const answers = await Promise.all(
        sent.map(({ id, cmd }) =>
          connection.request(cmd, cmd === 'Ping' ? undefined : probeArgs(cmd), ctx.timeouts.answerMs, id).then(
            (answer) => ({ id, cmd, answer }),
            (error: Error) => ({ id, cmd, error: error.message }),
          ),
        ),
      );
      // A grace for any second answer to come: a Ping's round trip (whatever the server wrote before its answer has
      // then arrived), then a while more for one sent later.
      await connection.request('Ping', undefined, ctx.timeouts.answerMs).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, ctx.timeouts.graceMs));
      const problems: string[] = [];
      for (const a of answers) if ('error' in a) problems.push(`${a.cmd} id ${a.id}: ${a.error}`);
      const received = ctx.observer.answers.filter((o) => connection.frames.includes(o.frame));
      for (const o of received) {
        if (o.cmd === undefined) problems.push(`an answer with id ${show(o.id)}, never sent`);
        if (o.duplicate) problems.push(`id ${show(o.id)} answered twice`);
      }
      return problems.length
        ? failed(joined(problems))
        : passed(`${sent.length} requests (${commands.join(', ')}) answered, ids up to 15 digits`);
    },
  },
  {
    id: 'answers.one-per-request',
    name: 'over the whole run, every answer belongs to a request sent and none is answered twice',
    timeoutMs: () => 1000,
    run(ctx) {
      const problems: string[] = [];
      for (const o of ctx.observer.answers) {
        if (o.cmd === undefined)
          problems.push(`an answer with id ${show(o.id)}, which the suite never sent on that connection`);
        else if (o.duplicate) problems.push(`${o.cmd} id ${show(o.id)} answered twice`);
      }
      return problems.length
        ? failed(joined(problems))
        : passed(`${ctx.observer.answers.length} answers, each to its own request`);
    },
  },
  {
    id: 'answers.id-first',
    name: 'every answer frame starts {"id":<digits>,"result" or "error"',
    timeoutMs: () => 1000,
    run(ctx) {
      const bad = ctx.observer.answers.filter((o) => !ID_FIRST.test(o.frame.text.slice(0, 64)));
      if (bad.length) {
        return failed(
          joined(
            bad.map(
              (o) => `${o.cmd ?? '?'} id ${show(o.id)}: expected id first, got ${show(o.frame.text.slice(0, 64))}`,
            ),
          ),
        );
      }
      return passed(`${ctx.observer.answers.length} answers`);
    },
  },
  {
    id: 'answers.error-shape',
    name: "every error is {code, message} with an integer code of the family's table and a string message",
    timeoutMs: () => 1000,
    run(ctx) {
      const family = ctx.requireFamily();
      const codes = RESULT_CODES[family];
      const problems: string[] = [];
      let errors = 0;
      for (const o of ctx.observer.answers) {
        const value = o.frame.value as Record<string, unknown>;
        if (!('error' in value)) continue;
        errors++;
        const what = `${o.cmd ?? '?'} id ${show(o.id)}`;
        if ('result' in value) problems.push(`${what}: an answer with both result and error`);
        const error = value.error as Record<string, unknown> | null;
        if (typeof error !== 'object' || error === null || Array.isArray(error)) {
          problems.push(`${what}: expected error {code, message}, got ${show(error, 80)}`);
          continue;
        }
        if (typeof error.code !== 'number' || !Number.isInteger(error.code))
          problems.push(`${what}: expected an integer code, got ${show(error.code, 40)}`);
        else if (!codes.has(error.code))
          problems.push(`${what}: code ${codeText(family, error.code)} is not in the ${family} result-code table`);
        if (typeof error.message !== 'string')
          problems.push(`${what}: expected a string message, got ${show(error.message, 40)}`);
      }
      return problems.length ? failed(joined(problems)) : passed(`${errors} error answers well-formed`);
    },
  },
];
