/**
 * The edge worker's configuration: every variable of its bindings (workers/env.ts) read once per bindings object by
 * the rules and defaults of shared/environment.ts, the schema the Node processes check theirs with. Every module and
 * Durable Object reads its settings here (`configOf(c.env)`, `configOf(this.env)`), never from the bindings
 * themselves, so each default is written once and each value is parsed once.
 *
 * A wrong value does not stop the edge: a deployed worker cannot refuse to start, and refusing every request over one
 * mistyped limit would be an outage. The edge logs the problem once per bindings object, in the same one-line
 * sentence `npm start` refuses it with (`{"level":"error","msg":"wrong edge variable: its fallback is used",
 * "problem":"API_RATE_LIMIT must be a whole number of requests from 0 to 1000000000, got \"30k\""}`), and serves with
 * the variable's documented fallback: its default, or for CORS_ORIGINS the entries that are origins
 * (`readWorkerEnvironment`).
 *
 * The bindings are the same object for every request an isolate serves (and for a Durable Object's life), so the
 * reading costs nothing after the first request.
 */
import { readWorkerEnvironment, type EnvironmentRecord, type WorkerEnvironment } from '../shared/environment.js';
import type { Env } from './env.js';

/** The worker's variables as read: typed, each unset or wrong one at its fallback. */
export type EdgeConfig = Readonly<WorkerEnvironment>;

const configs = new WeakMap<object, EdgeConfig>();
/** The configuration of bindings that carry no variables at all (unit tests that call a route without bindings). */
let unbound: EdgeConfig | undefined;

/** The configuration of these bindings, read on first use. */
export function configOf(env: Env | undefined): EdgeConfig {
  if (env === undefined || env === null) return (unbound ??= read({}));
  let config = configs.get(env);
  if (!config) configs.set(env, (config = read(env as unknown as EnvironmentRecord)));
  return config;
}

function read(env: EnvironmentRecord): EdgeConfig {
  const { values, problems } = readWorkerEnvironment(env);
  for (const problem of problems) {
    console.error(JSON.stringify({ level: 'error', msg: 'wrong edge variable: its fallback is used', problem }));
  }
  return Object.freeze(values);
}
