/**
 * int64 rules ("JSON values"): PF5 logins and tickets travel as bare digits, read exactly beyond 2^53 − 1 (the suite
 * parses with shared/losslessJson.ts, so a value it holds is the exact token sent). Every int64 key in the snapshot
 * and the events is an integer token, never a string or a fraction; the largest key of each kind, read back live by
 * that key, comes back exactly; and a key beyond the double range sent in a request is not rounded in the refusal.
 * PF4 keys are 32-bit: these rules are PF5's.
 */
import type { ChangeKind } from '../../../shared/protocol.js';
import { show } from '../connection.js';
import { failed, passed, type Rule } from '../context.js';
import { INT64_KEYS } from '../families.js';
import { joined } from './expect.js';

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

const isIntegerToken = (value: unknown) =>
  typeof value === 'bigint' || (typeof value === 'number' && Number.isInteger(value));
const big = (value: unknown) => (typeof value === 'bigint' ? value : BigInt(value as number));

/** Live reads by key, in preference order: the command, its arguments for key k, and the record found in its answer. */
const KEYED_READS: Partial<Record<ChangeKind, Array<{ cmd: string; args: (k: unknown) => Record<string, unknown> }>>> =
  {
    users: [
      { cmd: 'UserRequest', args: (login) => ({ login }) },
      { cmd: 'UserGet', args: (login) => ({ login }) },
    ],
    positions: [{ cmd: 'PositionGetByTickets', args: (t) => ({ tickets: [t] }) }],
    orders: [
      { cmd: 'OrderGetByTickets', args: (t) => ({ tickets: [t] }) },
      { cmd: 'OrderRequestByTickets', args: (t) => ({ tickets: [t] }) },
    ],
    deals: [
      { cmd: 'DealRequestByTicket', args: (ticket) => ({ ticket }) },
      { cmd: 'DealRequestByTickets', args: (t) => ({ tickets: [t] }) },
    ],
  };

/** The largest int64: a request naming it must not come back as 2^63 (what a double makes of it). */
const INT64_MAX = 9223372036854775807n;
const AS_DOUBLE = String(BigInt(Number(INT64_MAX)));

export const int64Rules: Rule[] = [
  {
    id: 'int64.bare-digits',
    name: 'PF5 logins and tickets in the snapshot and events are integer tokens, never strings',
    families: ['PF5'],
    timeoutMs: () => 1000,
    run(ctx) {
      const main = ctx.requireMain();
      const keys = INT64_KEYS.PF5;
      const problems: string[] = [];
      let checked = 0;
      let beyond = 0;
      const check = (kind: string, record: unknown, where: string) => {
        const field = keys[kind as ChangeKind];
        if (!field || typeof record !== 'object' || record === null) return;
        const value = (record as Record<string, unknown>)[field];
        checked++;
        if (!isIntegerToken(value))
          problems.push(`${where} ${kind} ${field}: expected bare integer digits, got ${show(value, 40)}`);
        else if (big(value) > SAFE) beyond++;
      };
      for (const [kind, items] of main.snapshot.items) for (const item of items) check(kind, item, 'snapshot');
      for (const event of main.connection.eventsAfter(main.snapshot.endSeq))
        check(String(event.event), event.record, `${String(event.op)} event`);
      return problems.length ? failed(joined(problems)) : passed(`${checked} keys, ${beyond} beyond 2^53 − 1`);
    },
  },
  {
    id: 'int64.round-trip',
    name: 'PF5 keys read back live by key come back exact, and a key past the double range is not rounded',
    families: ['PF5'],
    timeoutMs: (t) => 8 * t.answerMs,
    async run(ctx) {
      const main = ctx.requireMain();
      const connection = main.connection;
      main.cache.catchUp();
      const problems: string[] = [];
      const done: string[] = [];
      for (const [kind, reads] of Object.entries(KEYED_READS) as Array<
        [ChangeKind, NonNullable<(typeof KEYED_READS)[ChangeKind]>]
      >) {
        const field = INT64_KEYS.PF5[kind] as string;
        const read = reads.find((r) => ctx.declared.includes(r.cmd));
        const keys = [...main.cache.table(kind).values()].map((row) => row[field]).filter(isIntegerToken);
        if (!read || keys.length === 0) continue;
        const largest = keys.reduce((a, b) => (big(b) > big(a) ? b : a));
        const answer = await connection.request(read.cmd, read.args(largest), ctx.timeouts.answerMs);
        if (answer.kind === 'error') {
          problems.push(
            `${read.cmd} ${show(read.args(largest))}: expected the record, got error ${show(answer.error)}`,
          );
          continue;
        }
        const record: unknown = Array.isArray(answer.value) ? answer.value[0] : answer.value;
        const back = (record as Record<string, unknown> | undefined)?.[field];
        if (!isIntegerToken(back) || big(back) !== big(largest)) {
          problems.push(`${read.cmd}: expected ${field} ${String(largest)}, got ${show(back, 40)}`);
        } else {
          done.push(`${kind} ${String(largest)}`);
        }
      }
      const probe = KEYED_READS.users!.find((r) => ctx.declared.includes(r.cmd));
      if (probe) {
        const answer = await connection.request(probe.cmd, probe.args(INT64_MAX), ctx.timeouts.answerMs);
        const text = answer.kind === 'error' ? String(answer.message) : show(answer.value, 10_000);
        if (text.includes(AS_DOUBLE) && !text.includes(String(INT64_MAX))) {
          problems.push(
            `${probe.cmd} login ${INT64_MAX}: the answer names ${AS_DOUBLE}, the login rounded to a double`,
          );
        } else {
          done.push(
            `login ${INT64_MAX} ${text.includes(String(INT64_MAX)) ? 'named exactly' : 'not named'} in the answer`,
          );
        }
      }
      if (problems.length) return failed(joined(problems));
      return done.length
        ? passed(done.join(', '))
        : failed('no keyed read of users, positions, orders or deals is declared');
    },
  },
];
