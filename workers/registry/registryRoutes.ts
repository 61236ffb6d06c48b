/**
 * The catalog's local registry operations (TradePlatforms, TradePlatform, Organizations), answered from D1 and always
 * scoped to the caller's organization. They expect requireToken() to have run: the caller comes from the token.
 * A platform of another organization is answered byte for byte like an unknown one, so ids cannot be probed.
 * Like every endpoint they take the time budget (`X-Request-Timeout` / `requestTimeout`, 1 to 300 s; anything else is
 * a 400 Validation) and answer the one that applied in `X-Request-Timeout-Applied`, although a registry read answers
 * within any budget.
 */
import { Hono, type Context } from 'hono';
import type { AppEnv, Caller } from '../env.js';
import { configOf } from '../config.js';
import { registryOperations } from '../../shared/catalog/registry.js';
import type { Operation } from '../../shared/catalog/index.js';
import { resolveTimeout, TIMEOUT_APPLIED_HEADER, TIMEOUT_HEADER, TIMEOUT_QUERY } from '../api/timeout.js';
import { uuidSchema } from './ids.js';
import type { PlatformEntry } from './records.js';
import { RegistryStore } from './registryStore.js';
import { cachedPlatform } from './platformCache.js';
import { refuse, unknownPlatform } from '../envelope/index.js';

/** The verified caller; a missing one means requireToken() was not mounted in front, which must fail loudly. */
export function callerOf(c: Context<AppEnv>): Caller {
  const caller = c.get('caller');
  if (!caller) throw new Error('registry route reached without a verified caller: mount requireToken() on /api/*');
  return caller;
}

/**
 * The platform `id` if it belongs to the caller's organization, with the broker that serves it; null for a malformed,
 * unknown or foreign id alike. What every platform-addressed route should scope by.
 */
export function platformOf(c: Context<AppEnv>, id: string): Promise<PlatformEntry | null> {
  const organizationId = callerOf(c).organizationId;
  return cachedPlatform(organizationId, id, configOf(c.env).REGISTRY_CACHE_SECONDS, () =>
    new RegistryStore(c.env.DB).findPlatformEntry(organizationId, id),
  );
}

/** The entry's time budget checked and answered around its handler. */
function budgeted(
  entry: Operation,
  handler: (c: Context<AppEnv>) => Promise<Response>,
): (c: Context<AppEnv>) => Response | Promise<Response> {
  return (c) => {
    const budget = resolveTimeout(entry, c.req.header(TIMEOUT_HEADER), c.req.query(TIMEOUT_QUERY) ?? null);
    c.header(TIMEOUT_APPLIED_HEADER, String(budget.seconds));
    if (!budget.ok) return refuse(c, { kind: 'Validation', message: budget.message });
    return handler(c);
  };
}

export function registryRoutes(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get(
    '/api/TradePlatforms',
    budgeted(registryOperations.TradePlatforms, async (c) => {
      return c.json(await new RegistryStore(c.env.DB).listPlatforms(callerOf(c).organizationId));
    }),
  );

  app.get(
    '/api/TradePlatforms/:tradePlatform',
    budgeted(registryOperations.TradePlatform, async (c) => {
      const id = c.req.param('tradePlatform') ?? '';
      if (!uuidSchema.safeParse(id).success)
        return refuse(c, { kind: 'Validation', message: 'tradePlatform must be a uuid' });
      const entry = await platformOf(c, id);
      if (!entry) return refuse(c, unknownPlatform(id));
      return c.json(entry.platform);
    }),
  );

  app.get(
    '/api/Organizations',
    budgeted(registryOperations.Organizations, async (c) => {
      return c.json(await new RegistryStore(c.env.DB).listOrganizations(callerOf(c).organizationId));
    }),
  );

  return app;
}
