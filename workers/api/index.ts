/** The catalog-driven operation API: routes, input validation, time budgets, idempotency fingerprints, trace context. */
export { catalogRoutes, forwardedOperations, honoPath, EDGE_GRACE_MS } from './catalogRoutes.js';
export { validateInputs, CONTROL_QUERY } from '../../shared/catalog/inputs.js';
export { resolveTimeout, TIMEOUT_HEADER, TIMEOUT_APPLIED_HEADER } from './timeout.js';
export { IDEMPOTENCY_HEADER, idempotencyKeyProblem, requestHash, canonicalJson } from './idempotency.js';
export { traceContext } from './trace.js';
export { parseTraceparent, randomHex } from './traceparent.js';
