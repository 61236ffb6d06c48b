/** Response shaping for v2 envelopes and v1 errors, and the edge's refusals. */
export * from './envelope.js';
export * from './refusal.js';
