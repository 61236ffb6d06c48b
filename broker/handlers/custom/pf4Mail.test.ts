import { describe, expect, it } from 'vitest';
import { mail } from '../../../shared/catalog/v2/pf4/index.js';
import { encodeCursor } from '../paging.js';
import { MAILS_PER_REQUEST, pf4MailBindings } from './pf4Mail.js';
import {
  asJson,
  DEADLINE,
  expectOperationError,
  handlerOf,
  platformOf,
  ScriptedSession,
  sent,
} from '../../../test/support/broker/handlers.js';

/** A mail as the server sends it in a page: the record and its key. */
const mailOf = (key: number, body = `body ${key}`) => ({
  key,
  time: '2026-12-01T00:00:00Z',
  senderLogin: 0,
  senderName: 'Desk',
  subject: `s${key}`,
  body,
});
const recordOf = (key: number, body = `body ${key}`) => ({
  time: '2026-12-01T00:00:00Z',
  senderLogin: 0,
  senderName: 'Desk',
  subject: `s${key}`,
  body,
});

function run(session: ScriptedSession, args: Record<string, unknown> = {}, answerMaxBytes?: number) {
  const platform = platformOf('PF4', { session });
  return asJson(
    handlerOf(
      pf4MailBindings,
      mail.MailsRequest,
    )({ platform, args, deadline: DEADLINE, ...(answerMaxBytes ? { answerMaxBytes } : {}) }),
  );
}

const parsed = async (result: ReturnType<typeof run>) => {
  const r = await result;
  return { data: JSON.parse(r.json!), paging: r.paging };
};

describe('PF4 MailsRequest', () => {
  it('asks the server a few mails at a time and answers them all, newest first, without their keys', async () => {
    const keys = Array.from({ length: 45 }, (_, i) => 45 - i);
    const session = new ScriptedSession()
      .answers('MailsRequest', { items: keys.slice(0, 20).map((k) => mailOf(k)), hasMore: true })
      .answers('MailsRequest', { items: keys.slice(20, 40).map((k) => mailOf(k)), hasMore: true })
      .answers('MailsRequest', { items: keys.slice(40).map((k) => mailOf(k)), hasMore: false });
    const answer = await parsed(run(session));
    expect(answer.data).toStrictEqual(keys.map((k) => recordOf(k)));
    expect(answer.paging).toStrictEqual({ nextCursor: null, hasMore: false });
    expect(session.sent).toStrictEqual([
      sent('MailsRequest', { limit: MAILS_PER_REQUEST }),
      sent('MailsRequest', { limit: MAILS_PER_REQUEST, before: 26 }),
      sent('MailsRequest', { limit: MAILS_PER_REQUEST, before: 6 }),
    ]);
  });

  it('answers a page of `limit` mails with the cursor to go on from, and goes on from it', async () => {
    const first = new ScriptedSession().answers('MailsRequest', {
      items: [mailOf(9), mailOf(8), mailOf(7)],
      hasMore: true,
    });
    const page = await parsed(run(first, { limit: 3 }));
    expect(page.data).toStrictEqual([recordOf(9), recordOf(8), recordOf(7)]);
    expect(page.paging).toStrictEqual({ nextCursor: encodeCursor(7), hasMore: true });
    expect(first.sent).toStrictEqual([sent('MailsRequest', { limit: 3 })]);
    const next = new ScriptedSession().answers('MailsRequest', { items: [mailOf(6)], hasMore: false });
    const last = await parsed(run(next, { limit: 3, cursor: page.paging!.nextCursor }));
    expect(last).toStrictEqual({ data: [recordOf(6)], paging: { nextCursor: null, hasMore: false } });
    expect(next.sent).toStrictEqual([sent('MailsRequest', { limit: 3, before: 7 })]);
  });

  it('ends a page early where the next mail would pass the bound on one answer, and refuses unpaged mails past it before asking for more', async () => {
    const big = 'x'.repeat(400);
    const bodies = [mailOf(5, big), mailOf(4, big), mailOf(3, big)];
    const one = Buffer.byteLength(JSON.stringify(recordOf(5, big)));
    const bound = 2 + 2 * one + 1 + 10;
    const paged = new ScriptedSession().answers('MailsRequest', { items: bodies, hasMore: true });
    const page = await parsed(run(paged, { limit: 10 }, bound));
    expect(page.data).toStrictEqual([recordOf(5, big), recordOf(4, big)]);
    expect(page.paging).toStrictEqual({ nextCursor: encodeCursor(4), hasMore: true });
    const unpaged = new ScriptedSession().answers('MailsRequest', { items: bodies, hasMore: true });
    await expectOperationError(() => run(unpaged, {}, bound), {
      code: 'Validation',
      message: `the server's mails take more than the ${bound} bytes one answer may carry; ask for them in pages (limit, then cursor)`,
    });
    expect(unpaged.unused).toBe(0);
    expect(unpaged.sent).toHaveLength(1);
  });

  it("shapes the server's mails as PF4MailBox records in its order, recipients dropped and missing fields filled", async () => {
    const newest = {
      key: 2,
      time: '2026-01-02T00:00:00Z',
      senderLogin: 1000,
      senderName: 'Desk',
      subject: 'B',
      body: 'b',
      logins: [7],
    };
    const older = { key: 1, time: '2026-01-01T00:00:00Z', subject: 'A' };
    const session = new ScriptedSession().answers('MailsRequest', { items: [newest, older], hasMore: false });
    expect((await parsed(run(session))).data).toStrictEqual([
      { time: '2026-01-02T00:00:00Z', senderLogin: 1000, senderName: 'Desk', subject: 'B', body: 'b' },
      { time: '2026-01-01T00:00:00Z', senderLogin: 0, senderName: null, subject: 'A', body: null },
    ]);
  });

  it('answers no mails as an empty last page', async () => {
    const session = new ScriptedSession().answers('MailsRequest', { items: [], hasMore: false });
    expect(await parsed(run(session))).toStrictEqual({ data: [], paging: { nextCursor: null, hasMore: false } });
  });
});
