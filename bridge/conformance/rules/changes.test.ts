/**
 * The write rules' dependencies: a rule that builds on what another makes is skipped, not failed, when that one was
 * skipped (its command or event kind not declared), and fails when that one ran and made nothing; a rule is skipped
 * when an event kind it reads from the snapshot is not declared.
 */
import { describe, expect, it } from 'vitest';
import { RuleFailed, RuleSkipped, SuiteContext, type MainSession } from '../context.js';
import { RULES } from './index.js';

function suiteDeclaring(commands: string[], events: string[]): SuiteContext {
  const ctx = new SuiteContext({
    server: 'ws://127.0.0.1:1/none',
    login: 1,
    password: 'x',
    family: 'PF4',
    writes: true,
  });
  ctx.main = {
    login: { family: 'PF4', capabilities: { commands, events } },
    connection: { lastSeq: 0 },
  } as unknown as MainSession;
  return ctx;
}

const rule = (id: string) => RULES.find((r) => r.id === id)!;

describe('write rules that build on another', () => {
  it('are skipped, naming the rule they build on and why it was skipped, when it was skipped', async () => {
    const ctx = suiteDeclaring(['UserRecordUpdate'], ['users', 'groups']);
    expect(await rule('writes.pf4.user-add').run(ctx)).toEqual({
      result: 'skipped',
      detail: 'not declared: UserRecordNew',
    });
    const outcome = rule('writes.pf4.user-update').run(ctx);
    await expect(outcome).rejects.toBeInstanceOf(RuleSkipped);
    await expect(outcome).rejects.toThrow('builds on writes.pf4.user-add, skipped (not declared: UserRecordNew)');
  });

  it('fail when the rule they build on ran and made nothing', async () => {
    const ctx = suiteDeclaring(['UserRecordUpdate'], ['users', 'groups']);
    const outcome = rule('writes.pf4.user-update').run(ctx);
    await expect(outcome).rejects.toBeInstanceOf(RuleFailed);
    await expect(outcome).rejects.toThrow('needs what writes.pf4.user-add makes, which it did not');
  });
});

describe('a write rule reading a kind of the snapshot', () => {
  it('is skipped when that kind is not declared: an account is created in a group of the snapshot', async () => {
    for (const [id, command] of [
      ['writes.pf4.user-add', 'UserRecordNew'],
      ['writes.pf5.user-add', 'UserAdd'],
    ] as const) {
      const ctx = suiteDeclaring([command], ['users']);
      expect(await rule(id).run(ctx)).toEqual({ result: 'skipped', detail: 'event kinds not declared: groups' });
    }
  });
});
