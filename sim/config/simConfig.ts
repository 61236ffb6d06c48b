/**
 * What the simulator serves: the trading servers, their families, world sizes and manager logins. Read from the JSON
 * file named by SIM_CONFIG or taken from the embedded default (one PF4 and one PF5 demo server).
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { canonicalInt, int64FromText, INT64_MAX } from '../../shared/int64.js';
import { FAMILIES } from '../../shared/protocol.js';

export const DEFAULT_MANAGER_PASSWORD = 'manager-demo';

const managerSchema = z.strictObject({
  login: z.number().int().min(1).max(2147483647),
  password: z.string().min(1, 'password must not be empty'),
  /** Right names, or "all" for every right of the family. */
  rights: z.union([z.literal('all'), z.array(z.string())]).default('all'),
  disabled: z.boolean().default(false),
});

/**
 * A 64-bit id in the config: a JSON integer up to 2^53 − 1, or decimal digits in a string for any int64 (the file is
 * read with JSON.parse), answered in the canonical form of `shared/int64.ts` (a bigint beyond 2^53 − 1).
 */
const int64Id = z
  .union([
    z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
    z.string().regex(/^\d{1,19}$/, 'must be decimal digits'),
    z.bigint(), // a config parsed already (startSim validates what loadConfigFile answered)
  ])
  .transform((v, ctx) => {
    const id =
      typeof v === 'number'
        ? v
        : typeof v === 'bigint'
          ? v <= INT64_MAX
            ? canonicalInt(v)
            : undefined
          : int64FromText(v);
    if (id === undefined || id < 1) {
      ctx.addIssue({ code: 'custom', message: 'must be an integer from 1 to 9223372036854775807' });
      return z.NEVER;
    }
    return id;
  });

const serverSchema = z.strictObject({
  /** Becomes the WebSocket path, so it must be URL-safe. */
  name: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,64}$/, 'name must be 1-64 letters, digits, ".", "_" or "-"')
    .refine((n) => n !== 'control', 'name "control" is reserved'),
  family: z.enum(FAMILIES),
  seed: z.number().int().optional(),
  accounts: z.number().int().min(0).max(2_000_000).default(200),
  /** PF4 open trades, PF5 open positions. */
  trades: z.number().int().min(0).max(5_000_000).default(300),
  /** PF5 pending orders; PF4 folds pending orders into `trades`. */
  orders: z.number().int().min(0).max(5_000_000).optional(),
  symbols: z.number().int().min(1).max(10_000).default(12),
  ticksPerSecond: z.number().min(0).max(100_000).default(10),
  /** PF4 closed trades generated into the history (besides one deposit per account); default trades / 2. */
  history: z.number().int().min(0).max(5_000_000).optional(),
  /** How long an automatic activation (pending, SL, TP, stop-out) stays in the rollback buffer. */
  rollbackMs: z.number().int().min(0).max(3_600_000).default(10_000),
  /** Ticks kept per symbol for tick requests (a ring; older ticks are forgotten). */
  tickHistory: z.number().int().min(0).max(1_000_000).default(1000),
  /** How long the server refuses connections after `SrvRestart`. */
  restartMs: z.number().int().min(0).max(600_000).default(200),
  managers: z.array(managerSchema).min(1, 'managers must list at least one manager'),
  /** PF5: the logins UserAdd may take or allocate here (default 500000..999999); others belong to another server. */
  loginRange: z
    .strictObject({ min: int64Id, max: int64Id })
    .refine((r) => r.min <= r.max, 'loginRange.min must not exceed max')
    .optional(),
  /** PF5: the first order ticket (positions take their opening order's ticket) and the first deal ticket. */
  firstOrder: int64Id.optional(),
  firstDeal: int64Id.optional(),
});

const configSchema = z.strictObject({
  seed: z.number().int().optional(),
  servers: z
    .array(serverSchema)
    .min(1, 'servers must list at least one server')
    .refine((list) => new Set(list.map((s) => s.name)).size === list.length, 'server names must be unique'),
});

export type ManagerConfig = z.infer<typeof managerSchema>;
export type ServerConfig = z.infer<typeof serverSchema>;
export type SimConfig = z.infer<typeof configSchema>;
export type SimConfigInput = z.input<typeof configSchema>;

export function defaultConfig(managerPassword = DEFAULT_MANAGER_PASSWORD): SimConfigInput {
  const managers = [{ login: 1000, password: managerPassword, rights: 'all' as const }];
  return {
    servers: [
      { name: 'demo-pf4', family: 'PF4', managers },
      { name: 'demo-pf5', family: 'PF5', managers },
    ],
  };
}

/** Validates a config; the error message names the offending field path. */
export function parseConfig(input: unknown): SimConfig {
  // A bare array of servers is accepted as a shorthand.
  const candidate = Array.isArray(input) ? { servers: input } : input;
  const parsed = configSchema.safeParse(candidate);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`invalid simulator config: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  return parsed.data;
}

export function loadConfigFile(path: string): SimConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`cannot read simulator config ${path}: ${(err as Error).message}`, { cause: err });
  }
  return parseConfig(raw);
}
