/**
 * The attack drill's settings: the edge's limits the stack runs with (shared/environment.ts's defaults, the ones of
 * docs/operating.md's configuration table, unless set in the environment the drill passes on to the stack) and the
 * bounds its findings are judged by.
 */
import { WORKER_DEFAULTS } from '../../shared/environment.js';

export interface AttackSettings {
  CACHE_SECONDS: number;
  WINDOW_MS: number;
  TOKEN_LIMIT: number;
  FAILURE_LIMIT: number;
  VERIFY_LIMIT: number;
  FAILURE_SHARDS: number;
  /** How long past its exp the edge accepts a token, on REST and streams alike. */
  TOLERANCE_MS: number;
  /** A stream must end within a check interval of its cause; a second more for the query and the write. */
  STREAM_END_BOUND_MS: number;
}

export function attackSettings(env: Record<string, string | undefined>): AttackSettings {
  const CACHE_SECONDS = Number(env.REGISTRY_CACHE_SECONDS ?? WORKER_DEFAULTS.REGISTRY_CACHE_SECONDS);
  return {
    CACHE_SECONDS,
    WINDOW_MS: Number(env.RATE_LIMIT_WINDOW_SECONDS ?? WORKER_DEFAULTS.RATE_LIMIT_WINDOW_SECONDS) * 1000,
    TOKEN_LIMIT: Number(env.TOKEN_RATE_LIMIT ?? WORKER_DEFAULTS.TOKEN_RATE_LIMIT),
    FAILURE_LIMIT: Number(env.TOKEN_FAILURE_LIMIT ?? WORKER_DEFAULTS.TOKEN_FAILURE_LIMIT),
    VERIFY_LIMIT: Number(env.TOKEN_VERIFY_LIMIT ?? WORKER_DEFAULTS.TOKEN_VERIFY_LIMIT),
    FAILURE_SHARDS: Number(env.TOKEN_FAILURE_SHARDS ?? WORKER_DEFAULTS.TOKEN_FAILURE_SHARDS),
    TOLERANCE_MS: Number(env.TOKEN_CLOCK_TOLERANCE_SECONDS ?? WORKER_DEFAULTS.TOKEN_CLOCK_TOLERANCE_SECONDS) * 1000,
    STREAM_END_BOUND_MS: Math.max(1, CACHE_SECONDS) * 1000 + 1000,
  };
}

export const {
  CACHE_SECONDS,
  WINDOW_MS,
  TOKEN_LIMIT,
  FAILURE_LIMIT,
  VERIFY_LIMIT,
  FAILURE_SHARDS,
  TOLERANCE_MS,
  STREAM_END_BOUND_MS,
} = attackSettings(process.env);

/** docs/operating.md, "Probes, logs and metrics": a frozen trading server shows down within 10 s (keep-alive interval plus timeout). */
export const FREEZE_BOUND_MS = 10_000;
/** Cached reads of another client under a flood of invented ids: their p50 may grow at most this much. */
export const P50_BOUND = 3;
