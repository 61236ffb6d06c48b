/** v2 PF4 Mail. */
import { defineOperation } from '../../operation.js';
import { V2_PF4 as v2 } from '../paths.js';

export const mail = {
  MailLast: defineOperation({
    name: 'MailLast', generation: 'v2', family: 'PF4', method: 'GET', path: `${v2}/MailLast`,
    tag: 'Mail', summary: 'Body of the last internal mail the server holds ("" when none), live.',
    response: { type: 'string' }, timeout: 'read', read: 'live',
    answer: { kind: 'live', command: 'MailLast' },
  }),
};
