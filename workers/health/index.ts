/** Liveness and end-to-end health of the edge, its brokers and their platforms. */
export { healthz, type HealthReport } from './health.js';
