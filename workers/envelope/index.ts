/** Response shaping for v2 envelopes and v1 errors. */
export * from './envelope.js';
