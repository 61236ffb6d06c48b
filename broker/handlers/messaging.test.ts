/**
 * The PF4 messaging entries the generic interpreter answers (its live kind): NewsSend and MailSend hand the validated
 * body to the server under `record` (a mail's logins already collapsed by the edge) and answer its boolean; MailLast
 * passes the body through (MailsRequest, paged, has a handler of its own: custom/pf4Mail.test.ts). A refusal is the server's, code and message unchanged.
 */
import { describe, expect, it } from 'vitest';
import { findOperation, type Operation } from '../../shared/catalog/index.js';
import { OperationError } from '../../shared/errors.js';
import { interpret } from './interpreter.js';
import type { Handler } from './handler.js';
import {
  DEADLINE,
  ScriptedSession,
  expectOperationError,
  platformOf,
  sent,
} from '../../test/support/broker/handlers.js';
import { callerOf, json } from '../../test/support/catalog/calls.js';

const entry = (id: string): Operation =>
  findOperation(id) ??
  (() => {
    throw new Error(`no entry ${id}`);
  })();
const handlerOf = (id: string): Handler =>
  interpret(entry(id)) ??
  (() => {
    throw new Error(`no handler for ${id}`);
  })();
const validated = (name: string, body: unknown) => {
  const result = callerOf('v2.PF4.')(name, {}, '', json(body));
  if (!result.ok) throw new Error(result.message);
  return result.args;
};
const run = (id: string, session: ScriptedSession, args: Record<string, unknown> = {}) =>
  handlerOf(id)({ platform: platformOf('PF4', { session }), args, deadline: DEADLINE });

describe('NewsSend', () => {
  it("sends the item as the record and answers the server's true", async () => {
    const session = new ScriptedSession().answers('NewsSend', true);
    const args = validated('NewsSend', {
      topic: 'Rates',
      category: 'Macro',
      body: 'Held.\r\nMore soon.',
      highPriority: true,
    });
    expect(await run('v2.PF4.NewsSend', session, args)).toEqual({ data: true });
    expect(session.sent).toEqual([
      sent(
        'NewsSend',
        { record: { topic: 'Rates', category: 'Macro', body: 'Held.\r\nMore soon.', highPriority: true } },
        { keyedRead: undefined },
      ),
    ]);
  });
});

describe('MailSend', () => {
  it('sends the mail with its logins collapsed, once', async () => {
    const session = new ScriptedSession().answers('MailSend', true);
    const args = validated('MailSend', { subject: 'Statement', logins: [7, 8, 7], senderLogin: 0 });
    expect(await run('v2.PF4.MailSend', session, args)).toEqual({ data: true });
    expect(session.sent).toEqual([
      sent('MailSend', { record: { subject: 'Statement', logins: [7, 8], senderLogin: 0 } }, { keyedRead: undefined }),
    ]);
  });

  it("answers the server's refusal of an unknown login as it came", async () => {
    const refusal = new OperationError('PF4Error', 'record.logins: login 99 not found', 3);
    const session = new ScriptedSession().fails('MailSend', refusal);
    await expectOperationError(
      () => run('v2.PF4.MailSend', session, validated('MailSend', { subject: 's', logins: [99] })),
      { code: 'PF4Error', managerCode: 3, message: 'record.logins: login 99 not found' },
    );
  });
});

describe('MailLast', () => {
  it("passes the newest mail's body through for MailLast", async () => {
    const session = new ScriptedSession().answers('MailLast', 'b');
    expect(await run('v2.PF4.MailLast', session)).toEqual({ data: 'b' });
  });
});
