/**
 * Capability rules: the login's command list against what actually answers. Every declared read (commands.ts) sent
 * with harmless arguments must not be answered "unknown command …"; a read the suite knows for the family but the
 * server did not declare must be; a made-up command gets the family's bad-arguments code with a message beginning
 * `unknown command `. Writes are probed (with `{}`) only under `--writes`; a restart never.
 *
 * Probes go 16 at a time on a non-pumping session. A command the family answers by dropping the connection for want
 * of a right (close 1008) counts as answered; the probes it cut short are sent again one by one on new sessions.
 */
import { CLOSE_CODES } from '../../../shared/protocol.js';
import { show, type ProbeConnection } from '../connection.js';
import { failed, passed, skipped, type Rule, type SuiteContext } from '../context.js';
import { COMMANDS, RESTART_COMMANDS, probeArgs } from '../commands.js';
import { CODES } from '../families.js';
import { errorWithCode, isUnknownCommand, joined } from './expect.js';

const BATCH = 16;

interface ProbeOutcome {
  cmd: string;
  /** 'unknown': answered "unknown command"; 'answered': anything else (a 1008 drop included); 'lost': no answer. */
  verdict: 'unknown' | 'answered' | 'lost';
  detail: string;
}

async function probeOne(connection: ProbeConnection, cmd: string, answerMs: number): Promise<ProbeOutcome | 'cut'> {
  try {
    const answer = await connection.request(cmd, probeArgs(cmd), answerMs);
    return {
      cmd,
      verdict: isUnknownCommand(answer) ? 'unknown' : 'answered',
      detail: answer.kind === 'error' ? show(answer.error, 100) : 'a result',
    };
  } catch (error) {
    if (connection.closed) return 'cut';
    return { cmd, verdict: 'lost', detail: (error as Error).message };
  }
}

/** Probes `commands`; every command gets an outcome. */
export async function probe(ctx: SuiteContext, commands: readonly string[]): Promise<ProbeOutcome[]> {
  const out: ProbeOutcome[] = [];
  const again: string[] = [];
  let { connection } = await ctx.openLoggedIn(false);
  for (let at = 0; at < commands.length; at += BATCH) {
    if (connection.closed) ({ connection } = await ctx.openLoggedIn(false));
    const batch = commands.slice(at, at + BATCH);
    const results = await Promise.all(batch.map((cmd) => probeOne(connection, cmd, ctx.timeouts.answerMs)));
    results.forEach((result, i) => (result === 'cut' ? again.push(batch[i]) : out.push(result)));
  }
  for (const cmd of again) {
    if (connection.closed) ({ connection } = await ctx.openLoggedIn(false));
    const result = await probeOne(connection, cmd, ctx.timeouts.answerMs);
    if (result !== 'cut') out.push(result);
    else if (connection.closeCode === CLOSE_CODES.rightDropped)
      out.push({ cmd, verdict: 'answered', detail: 'dropped the session (1008)' });
    else out.push({ cmd, verdict: 'lost', detail: `the connection closed with ${connection.closeCode}` });
  }
  return out;
}

const probeBound = (t: { answerMs: number }) => 14 * t.answerMs;

export const capabilityRules: Rule[] = [
  {
    id: 'capabilities.ping-declared',
    name: 'the declared commands include Ping',
    timeoutMs: () => 1000,
    run(ctx) {
      ctx.requireMain();
      return ctx.declared.includes('Ping')
        ? passed(`${ctx.declared.length} commands declared`)
        : failed('expected Ping among the declared commands; it is missing');
    },
  },
  {
    id: 'capabilities.read-probes',
    name: 'every declared read, probed with harmless arguments, is not answered "unknown command"',
    timeoutMs: probeBound,
    async run(ctx) {
      const family = ctx.requireFamily();
      ctx.requireMain();
      const { reads, writes } = COMMANDS[family];
      const toProbe = ctx.declared.filter((cmd) => reads.has(cmd) && !RESTART_COMMANDS.has(cmd));
      const unclassified = ctx.declared.filter((cmd) => !reads.has(cmd) && !writes.has(cmd));
      const outcomes = await probe(ctx, toProbe);
      const bad = outcomes
        .filter((o) => o.verdict !== 'answered')
        .map((o) => `${o.cmd}: ${o.verdict === 'unknown' ? `declared but answered ${o.detail}` : o.detail}`);
      if (bad.length) return failed(joined(bad));
      const left = unclassified.length ? `; not probed (not classified): ${unclassified.join(', ')}` : '';
      return passed(`${toProbe.length} declared reads answered${left}`);
    },
  },
  {
    id: 'capabilities.undeclared-reads',
    name: 'a read the family has but the server did not declare is answered "unknown command"',
    timeoutMs: probeBound,
    async run(ctx) {
      const family = ctx.requireFamily();
      ctx.requireMain();
      const missing = [...COMMANDS[family].reads].filter((cmd) => !ctx.declared.includes(cmd)).sort();
      if (missing.length === 0) return passed(`every read the suite knows for ${family} is declared`);
      const outcomes = await probe(ctx, missing);
      const bad = outcomes
        .filter((o) => o.verdict !== 'unknown')
        .map((o) => `${o.cmd}: not declared, but answered ${o.detail}`);
      return bad.length ? failed(joined(bad)) : passed(`${missing.length} undeclared reads answered "unknown command"`);
    },
  },
  {
    id: 'capabilities.write-probes',
    name: 'every declared write, probed with {}, is not answered "unknown command" (--writes)',
    timeoutMs: probeBound,
    async run(ctx) {
      if (!ctx.options.writes) return skipped('needs --writes: probes change data');
      const family = ctx.requireFamily();
      ctx.requireMain();
      const toProbe = ctx.declared.filter((cmd) => COMMANDS[family].writes.has(cmd) && !RESTART_COMMANDS.has(cmd));
      const outcomes = await probe(ctx, toProbe);
      const bad = outcomes
        .filter((o) => o.verdict !== 'answered')
        .map((o) => `${o.cmd}: ${o.verdict === 'unknown' ? `declared but answered ${o.detail}` : o.detail}`);
      return bad.length ? failed(joined(bad)) : passed(`${toProbe.length} declared writes answered`);
    },
  },
  {
    id: 'capabilities.unknown-command',
    name: 'an undeclared made-up command gets the bad-arguments code and "unknown command <name>"',
    timeoutMs: (t) => 3 * t.answerMs,
    async run(ctx) {
      const family = ctx.requireFamily();
      const cmd = 'ConformanceNoSuchCommand';
      const { connection } = await ctx.openLoggedIn(false);
      const answer = await connection.request(cmd, {}, ctx.timeouts.answerMs);
      const problem = errorWithCode(answer, family, CODES[family].badArgs, cmd);
      if (problem) return failed(problem);
      if (!isUnknownCommand(answer))
        return failed(
          `${cmd}: expected a message beginning "unknown command ", got ${show(answer.kind === 'error' ? answer.message : undefined)}`,
        );
      return passed(show(answer.kind === 'error' ? answer.message : ''));
    },
  },
];
