/** v2 PF4 Plugins: the JSON command channel to server plugins. */
import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { V2_PF4 as v2 } from '../paths.js';

/** Any JSON value, passed as is; no body at all is the command `null` (the operation is described without one). */
const anyJsonBody = z.unknown().transform((v) => (v === undefined ? null : v));

export const plugins = {
  ExternalCommandJSON: defineOperation({
    name: 'ExternalCommandJSON', generation: 'v2', family: 'PF4', method: 'POST', path: `${v2}/ExternalCommandJSON`,
    tag: 'Plugins', summary: 'Passes the JSON body verbatim (no body: null) to the first plugin that answers with success and returns that plugin\'s answer.',
    body: anyJsonBody, response: {}, timeout: 'maintenance', read: 'live', mutating: true,
    // A plugin can do anything on the server: administrative. Its payload is opaque, control characters included.
    scope: 'webapi.admin', controlCharacters: { body: 'any' },
    answer: { kind: 'live', command: 'ExternalCommandJSON', args: (a) => ({ payload: a.body }) },
  }),
};
