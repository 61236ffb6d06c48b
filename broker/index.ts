/** The broker: start it in-process with `startBroker`, or run `main.ts` for a separate process. */
export { drainTimeoutFor, startBroker, type BrokerOptions, type RunningBroker } from './broker.js';
export type { PlatformConfig, SessionOptions, SessionState } from './session/managerSession.js';
export { jsonLineLogger, silentLogger, type Logger, type LogLevel } from './observability/log.js';
