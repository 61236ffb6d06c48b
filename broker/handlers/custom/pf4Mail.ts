/**
 * PF4 `MailsRequest`: the server's kept mails, newest first, asked of the server a few at a time and answered in pages
 * bounded in bytes as well as in count. A mail's body may hold 65,536 characters (up to 192 KiB of UTF-8), and the
 * server keeps 1,000 of them: asked for at once, they would be one answer of up to 192 MiB, read and parsed by the
 * broker before any bound applies. So the server is asked for MAILS_PER_REQUEST at a time (a server answer of at most
 * 4 MiB), and the answer stops where the next mail would pass the bound on one answer: a page then holds fewer mails
 * than its `limit`, with `nextCursor` to go on from; without `limit`, mails that do not fit in one answer are refused
 * with a Validation error asking for pages, before more is asked of the server. The cursor is the last mail's key
 * (its place in arrival order, which the server sends with each mail of a page and the answer leaves out).
 */
import { mail } from '../../../shared/catalog/v2/pf4/index.js';
import { OperationError } from '../../../shared/errors.js';
import { stringifyJson } from '../../../shared/losslessJson.js';
import { shapeRecord } from '../../../shared/records/shape.js';
import { ANSWER_MAX_BYTES, type HandlerResult } from '../handler.js';
import { isIntegerKey, pageRequest, pagingMeta } from '../paging.js';
import { bind } from './bind.js';

/** Mails asked of the server in one command: 20 bodies of at most 192 KiB each. */
export const MAILS_PER_REQUEST = 20;

const shapeMail = shapeRecord('PF4MailBox');

interface MailsPage {
  items?: Array<Record<string, unknown> & { key?: unknown }>;
  hasMore?: boolean;
}

export const pf4MailBindings = [
  bind(mail.MailsRequest, async (ctx): Promise<HandlerResult> => {
    const bound = ctx.answerMaxBytes ?? ANSWER_MAX_BYTES;
    const page = pageRequest(ctx.args as Record<string, unknown>, isIntegerKey);
    const rows: string[] = [];
    // The answer's bytes so far: the brackets, and a comma before every row but the first.
    let bytes = 2;
    let before = typeof page.after === 'number' ? page.after : undefined;
    let lastKey: number | undefined;
    for (;;) {
      const want = page.limit === undefined ? MAILS_PER_REQUEST : Math.min(MAILS_PER_REQUEST, page.limit - rows.length);
      const got = (await ctx.platform.session.request(
        'MailsRequest',
        { limit: want, ...(before !== undefined ? { before } : {}) },
        ctx.deadline,
      )) as MailsPage;
      const items = Array.isArray(got?.items) ? got.items : [];
      for (const item of items) {
        const text = stringifyJson(shapeMail(item));
        const size = Buffer.byteLength(text) + (rows.length > 0 ? 1 : 0);
        if (bytes + size > bound) {
          if (page.limit === undefined) {
            throw new OperationError(
              'Validation',
              `the server's mails take more than the ${bound} bytes one answer may carry; ask for them in pages (limit, then cursor)`,
            );
          }
          if (rows.length === 0)
            throw new OperationError('Validation', `one mail is larger than the ${bound} bytes one answer may carry`);
          return { rows, paging: pagingMeta(true, lastKey) };
        }
        rows.push(text);
        bytes += size;
        if (typeof item.key === 'number') lastKey = item.key;
      }
      const more = got?.hasMore === true && items.length > 0 && typeof lastKey === 'number';
      if (!more) return { rows, paging: pagingMeta(false, lastKey) };
      if (page.limit !== undefined && rows.length >= page.limit) return { rows, paging: pagingMeta(true, lastKey) };
      before = lastKey;
    }
  }),
];
