/**
 * Login rules ("Login", docs/manager-protocol.md; the schemas of shared/protocol.ts): the answer's shape, version
 * negotiation, the family, and the refusals a server owes: a wrong password (the family's refusal code, the session
 * still answering, the password never echoed), commands before login, a malformed login, a second login.
 */
import { loginResultSchema, type LoginResult } from '../../../shared/protocol.js';
import { secretForms, show } from '../connection.js';
import { failed, passed, skipped, type Rule } from '../context.js';
import { CODES } from '../families.js';
import { codeText, errorWithCode, joined } from './expect.js';

const bound = (t: { answerMs: number }) => 3 * t.answerMs;

export const loginRules: Rule[] = [
  {
    id: 'login.result-schema',
    name: 'the login answer matches loginResultSchema',
    timeoutMs: () => 1000,
    run(ctx) {
      const answer = ctx.mainLoginAnswer;
      if (!answer) return failed(`no login answer: ${ctx.mainError ?? 'unknown'}`);
      if (answer.kind === 'error') return failed(`expected a login result, got error ${show(answer.error)}`);
      const parsed = loginResultSchema.safeParse(answer.value);
      if (!parsed.success) {
        return failed(
          joined(parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)),
        );
      }
      const { server, family, build, version, capabilities } = parsed.data;
      return passed(
        `${server}, ${family} build ${build}, version ${version}, ${capabilities.commands.length} commands, events ${capabilities.events.join(', ')}`,
      );
    },
  },
  {
    id: 'login.version-1',
    name: 'a login offering versions [1] is answered version 1',
    timeoutMs: () => 1000,
    run(ctx) {
      const main = ctx.requireMain();
      return main.login.version === 1
        ? passed('version 1')
        : failed(`expected version 1, got ${show(main.login.version)}`);
    },
  },
  {
    id: 'login.version-absent',
    name: 'a login without versions is answered version 1',
    timeoutMs: bound,
    async run(ctx) {
      const connection = await ctx.open();
      const answer = await connection.request('login', ctx.loginArgs({ pump: false }), ctx.timeouts.answerMs);
      if (answer.kind === 'error') return failed(`expected a login result, got error ${show(answer.error)}`);
      const version = (answer.value as Partial<LoginResult>)?.version;
      return version === 1 ? passed('version 1') : failed(`expected version 1, got ${show(version)}`);
    },
  },
  {
    id: 'login.unknown-version',
    name: 'a login offering only an unknown version is refused and leaves the session logged out',
    timeoutMs: bound,
    async run(ctx) {
      const family = ctx.requireFamily();
      const connection = await ctx.open();
      const answer = await connection.request(
        'login',
        ctx.loginArgs({ pump: false, versions: [999] }),
        ctx.timeouts.answerMs,
      );
      if (answer.kind === 'result')
        return failed(`expected a refusal of versions [999], got result ${show(answer.value, 100)}`);
      const ping = await connection.request('Ping', undefined, ctx.timeouts.answerMs);
      const problem = errorWithCode(ping, family, CODES[family].noRights, 'a Ping after the refusal');
      return problem
        ? failed(problem)
        : passed(`refused with ${codeText(family, answer.code)} ${show(answer.message, 80)}`);
    },
  },
  {
    id: 'login.family',
    name: "the login answer's family is the one given by --family",
    timeoutMs: () => 1000,
    run(ctx) {
      const expected = ctx.options.family;
      if (!expected) return skipped('no --family given');
      const main = ctx.requireMain();
      return main.login.family === expected
        ? passed(expected)
        : failed(`expected family ${expected}, got ${show(main.login.family)}`);
    },
  },
  {
    id: 'login.wrong-password',
    name: "a wrong password gets the family's refusal code, without the password, and the connection still answers",
    timeoutMs: bound,
    async run(ctx) {
      const family = ctx.requireFamily();
      const connection = await ctx.open();
      const wrong = ctx.wrongPassword;
      const answer = await connection.request(
        'login',
        ctx.loginArgs({ password: wrong, pump: false }),
        ctx.timeouts.answerMs,
      );
      const problem = errorWithCode(answer, family, CODES[family].refusedLogin, 'login with a wrong password');
      if (problem || answer.kind !== 'error') return failed(problem ?? 'expected a refusal');
      // The frame as it came (show() would redact the very thing looked for), in both its raw and JSON-escaped forms.
      const text = answer.frame.text;
      const carries = (secret: string) => secretForms(secret).some((form) => text.includes(form));
      if (carries(wrong) || (ctx.options.password.length >= 4 && carries(ctx.options.password))) {
        return failed('the refusal repeats the password sent');
      }
      const ping = await connection.request('Ping', undefined, ctx.timeouts.answerMs);
      const after = errorWithCode(ping, family, CODES[family].noRights, 'a Ping after the refusal');
      return after
        ? failed(after)
        : passed(
            `refused with ${codeText(family, answer.code)}; a Ping after it answered ${codeText(family, CODES[family].noRights)}`,
          );
    },
  },
  {
    id: 'login.before-login',
    name: "commands before login, Ping included, get the family's no-rights code",
    timeoutMs: bound,
    async run(ctx) {
      const family = ctx.requireFamily();
      const connection = await ctx.open();
      const commands = ['Ping', ...(ctx.declared.includes('ServerTime') ? ['ServerTime'] : [])];
      const problems: string[] = [];
      for (const cmd of commands) {
        const answer = await connection.request(cmd, undefined, ctx.timeouts.answerMs);
        const problem = errorWithCode(answer, family, CODES[family].noRights, `${cmd} before login`);
        if (problem) problems.push(problem);
      }
      return problems.length
        ? failed(joined(problems))
        : passed(`${commands.join(', ')}: ${codeText(family, CODES[family].noRights)}`);
    },
  },
  {
    id: 'login.malformed',
    name: 'a malformed login gets the bad-arguments code naming the field',
    timeoutMs: (t) => 5 * t.answerMs,
    async run(ctx) {
      const family = ctx.requireFamily();
      const connection = await ctx.open();
      const cases: Array<[string, Record<string, unknown>]> = [
        ['login', ctx.loginArgs({ login: 'x', pump: false })],
        ['login', ctx.loginArgs({ login: 0, pump: false })],
        ['password', ctx.loginArgs({ password: 5, pump: false })],
        ['pump', ctx.loginArgs({ pump: 'yes' })],
      ];
      const problems: string[] = [];
      for (const [field, args] of cases) {
        const sent = { ...args, password: args.password === ctx.options.password ? '(the password)' : args.password };
        const answer = await connection.request('login', args, ctx.timeouts.answerMs);
        const problem = errorWithCode(answer, family, CODES[family].badArgs, `login ${show(sent, 80)}`);
        if (problem) problems.push(problem);
        else if (answer.kind === 'error' && !String(answer.message).includes(field)) {
          problems.push(`login ${show(sent, 80)}: the message ${show(answer.message, 80)} does not name ${field}`);
        }
      }
      return problems.length
        ? failed(joined(problems))
        : passed(
            `${cases.length} malformed logins refused with ${codeText(family, CODES[family].badArgs)}, each naming its field`,
          );
    },
  },
  {
    id: 'login.second-login',
    name: 'a second login on a logged-in session gets the bad-arguments code',
    timeoutMs: bound,
    async run(ctx) {
      const family = ctx.requireFamily();
      const { connection } = await ctx.openLoggedIn(false);
      const answer = await connection.request('login', ctx.loginArgs({ pump: false }), ctx.timeouts.answerMs);
      const problem = errorWithCode(answer, family, CODES[family].badArgs, 'a second login');
      return problem ? failed(problem) : passed(`refused with ${codeText(family, CODES[family].badArgs)}`);
    },
  },
];
