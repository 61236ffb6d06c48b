import type { Family } from '../../protocol.js';
/** Path prefixes of the v2 surface. */
export const V2_PF4 = '/api/v2/PF4/{tradePlatform}';
export const V2_PF5 = '/api/v2/PF5/{tradePlatform}';
export const v2Prefix = (family: Family) => (family === 'PF4' ? V2_PF4 : V2_PF5);
