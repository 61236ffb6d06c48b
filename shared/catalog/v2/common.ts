/** v2 operations both families answer the same way, declared once. */
import { defineForFamilies } from '../operation.js';
import { FAMILIES } from '../../protocol.js';
import { v2Prefix } from './paths.js';

export const commonV2 = {
  ServerTime: defineForFamilies(FAMILIES, {
    name: 'ServerTime',
    generation: 'v2',
    method: 'GET',
    path: (f) => `${v2Prefix(f)}/ServerTime`,
    tag: 'Common',
    summary: 'Trading server time (live).',
    response: { type: 'string', format: 'date-time' },
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'ServerTime' },
  }),
};
