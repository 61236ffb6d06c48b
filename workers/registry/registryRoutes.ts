/**
 * The catalog's local registry operations (TradePlatforms, TradePlatform, Organizations, and for administrators the
 * organization's API clients: Clients, Client, ClientAllowedNetworks), answered from D1 and always scoped to the
 * caller's organization. They expect requireToken() to have run: the caller comes from the token, and its token must
 * hold the entry's scope (`webapi.admin` for the clients). A platform or client of another organization is answered
 * byte for byte like an unknown one, so ids cannot be probed. No answer holds secret material.
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
import { generationOf, OUTCOME_HEADER, outcomeOf, refuse, statusOutcome, unknownPlatform } from '../envelope/index.js';
import { CallAudit } from '../audit/callAudit.js';
import { scopeRefusal } from '../auth/requireScope.js';
import { validateInputs } from '../../shared/catalog/inputs.js';
import { readBody } from '../api/requestBody.js';
import { clientNetworks } from './records.js';
import { RegistryError } from './registryStore.js';
import { keyedChange } from './localKeys.js';
import { REPLAYED_HEADER } from '../gateway/messages.js';

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

/**
 * A route the edge answers itself (`read: 'local'`): the entry's scope and time budget checked and answered around
 * its handler, its path, query and body validated against the entry (the handler gets the arguments), a change of
 * the edge's own resources under /api/v2/ made at most once per Idempotency-Key (localKeys.ts), and a change recorded
 * in the audit trail.
 */
export function localRoute(
  entry: Operation,
  handler: (c: Context<AppEnv>, args: Record<string, unknown>) => Promise<Response>,
): (c: Context<AppEnv>) => Response | Promise<Response> {
  return async (c) => {
    // An admin change is recorded in the organization's audit trail, refused or not (workers/audit/).
    const audit = CallAudit.of(c, entry);
    const answer = await checkedCall(c, entry, handler, audit);
    if (audit) {
      // A v2 answer tells its outcome in its envelope, not its status.
      const v2 = generationOf(c.req.path) === 'v2';
      audit.finish(
        v2 ? outcomeOf(answer.status, await answer.clone().text(), 'v2') : statusOutcome(answer.status),
        answer.headers.get(OUTCOME_HEADER) === 'unknown',
        answer.headers.get(REPLAYED_HEADER) === 'true',
      );
    }
    return answer;
  };
}

async function checkedCall(
  c: Context<AppEnv>,
  entry: Operation,
  handler: (c: Context<AppEnv>, args: Record<string, unknown>) => Promise<Response>,
  audit: CallAudit | null,
): Promise<Response> {
  const budget = resolveTimeout(entry, c.req.header(TIMEOUT_HEADER), c.req.query(TIMEOUT_QUERY) ?? null);
  c.header(TIMEOUT_APPLIED_HEADER, String(budget.seconds));
  const scoped = scopeRefusal(entry, callerOf(c), {
    generation: generationOf(c.req.path),
    family: null,
    paged: false,
    traceId: c.get('traceId'),
  });
  if (scoped) return c.body(scoped.body, scoped.status as 200, { 'content-type': JSON_TYPE, ...scoped.headers });
  if (!budget.ok) return refuse(c, { kind: 'Validation', message: budget.message });
  // The edge's own resources under /api/v2/ take v2's rules: a destructive one needs confirm=true.
  if (entry.destructive && generationOf(c.req.path) === 'v2' && c.req.query('confirm')?.toLowerCase() !== 'true') {
    return refuse(c, { kind: 'Validation', message: 'confirm: must be true for this destructive operation' });
  }
  if (!entry.params && !entry.query && !entry.body) return keyedChange(c, entry, {}, () => handler(c, {}));
  const body = entry.body ? await readBody(c) : ({ kind: 'none' } as const);
  const inputs = validateInputs(entry, { ...c.req.param() }, new URL(c.req.url), body);
  if (!inputs.ok) return refuse(c, { kind: 'Validation', message: inputs.message });
  audit?.arguments(inputs.args);
  // A change of the edge's own resources under /api/v2/ takes an Idempotency-Key (localKeys.ts).
  return keyedChange(c, entry, inputs.args, () => handler(c, inputs.args));
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** A registry refusal of an admin change as the caller's answer: unknown (or foreign) 404, bad input 400. */
function registryRefusal(c: Context<AppEnv>, error: unknown): Response {
  if (!(error instanceof RegistryError)) throw error;
  return refuse(c, { kind: error.kind === 'not_found' ? 'NotFound' : 'Validation', message: error.message });
}

export function registryRoutes(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get(
    '/api/TradePlatforms',
    localRoute(registryOperations.TradePlatforms, async (c) => {
      return c.json(await new RegistryStore(c.env.DB).listPlatforms(callerOf(c).organizationId));
    }),
  );

  app.get(
    '/api/TradePlatforms/:tradePlatform',
    localRoute(registryOperations.TradePlatform, async (c) => {
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
    localRoute(registryOperations.Organizations, async (c) => {
      return c.json(await new RegistryStore(c.env.DB).listOrganizations(callerOf(c).organizationId));
    }),
  );

  app.get(
    '/api/Clients',
    localRoute(registryOperations.Clients, async (c) => {
      return c.json(await new RegistryStore(c.env.DB).listClients(callerOf(c).organizationId));
    }),
  );

  app.get(
    '/api/Clients/:clientId',
    localRoute(registryOperations.Client, async (c, args) => {
      const clientId = args.clientId as string;
      const client = await new RegistryStore(c.env.DB).findOrganizationClient(callerOf(c).organizationId, clientId);
      if (!client) return refuse(c, { kind: 'NotFound', message: `client ${clientId} not found` });
      return c.json(client);
    }),
  );

  app.put(
    '/api/Clients/:clientId/AllowedNetworks',
    localRoute(registryOperations.ClientAllowedNetworks, async (c, args) => {
      const clientId = args.clientId as string;
      const { allowedNetworks } = args.body as { allowedNetworks: string[] };
      const checked = clientNetworks(allowedNetworks);
      if (!checked.ok) {
        const field = checked.index === undefined ? 'allowedNetworks' : `allowedNetworks[${checked.index}]`;
        return refuse(c, { kind: 'Validation', message: `body.${field}: ${checked.message}` });
      }
      try {
        const store = new RegistryStore(c.env.DB);
        return c.json(await store.setClientNetworks(clientId, checked.networks, callerOf(c).organizationId));
      } catch (error) {
        return registryRefusal(c, error);
      }
    }),
  );

  return app;
}
