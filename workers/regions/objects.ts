/**
 * Stubs of the gateway's objects where they belong (`placement.ts`): the namespace restricted to the platform's
 * jurisdiction, and the placement's region as the location hint of the object's first `get()`. Ids are kept by name:
 * `idFromName` hashes the name on every call, and an id (unlike a stub, which belongs to the request that made it)
 * may be kept.
 */
import type { Jurisdiction } from '../../shared/regions.js';
import type { Placement } from './placement.js';

/** Names whose ids an isolate keeps per namespace; the oldest name goes first. */
export const MAX_IDS = 10_000;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- ids of the objects of any class: the class is the namespace's business
const ids = new WeakMap<DurableObjectNamespace<any>, Map<string, DurableObjectId>>();
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
const restricted = new WeakMap<DurableObjectNamespace<any>, Map<Jurisdiction, DurableObjectNamespace<any>>>();

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
export function objectId(ns: DurableObjectNamespace<any>, name: string): DurableObjectId {
  let byName = ids.get(ns);
  if (!byName) ids.set(ns, (byName = new Map<string, DurableObjectId>()));
  let id = byName.get(name);
  if (id === undefined) {
    if (byName.size >= MAX_IDS) byName.delete(byName.keys().next().value!);
    id = ns.idFromName(name);
    byName.set(name, id);
  }
  return id;
}

/** What a local workerd answers a jurisdiction restriction with: it has none to give. */
export const LOCAL_NO_JURISDICTIONS = 'Jurisdiction restrictions are not implemented in workerd.';

/**
 * The name an object of `jurisdiction` has on a local workerd, which cannot restrict a namespace: the jurisdiction
 * before the name, so its objects are other objects than the unrestricted ones of the same name, as on Cloudflare
 * (`launcher/edge.ts`'s inspect worker names them the same way).
 */
export const localJurisdictionName = (jurisdiction: Jurisdiction, name: string) => `${jurisdiction}:${name}`;

/**
 * `ns` restricted to `jurisdiction` (itself for none), one restricted namespace per binding and jurisdiction. On a
 * local workerd, which refuses restrictions with LOCAL_NO_JURISDICTIONS (and only there), the objects of a
 * jurisdiction are told apart by name instead (`localJurisdictionName`).
 */
export function namespaceIn<T extends Rpc.DurableObjectBranded | undefined>(
  ns: DurableObjectNamespace<T>,
  jurisdiction: Jurisdiction | null,
): DurableObjectNamespace<T> {
  if (jurisdiction === null) return ns;
  let byJurisdiction = restricted.get(ns);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
  if (!byJurisdiction) restricted.set(ns, (byJurisdiction = new Map<Jurisdiction, DurableObjectNamespace<any>>()));
  let sub = byJurisdiction.get(jurisdiction) as DurableObjectNamespace<T> | undefined;
  if (sub === undefined) {
    try {
      // workers-types lists the jurisdictions it knew when it was published; `us` came later.
      sub = ns.jurisdiction(jurisdiction as DurableObjectJurisdiction);
    } catch (error) {
      if ((error as Error).message !== LOCAL_NO_JURISDICTIONS) throw error;
      sub = {
        idFromName: (name: string) => ns.idFromName(localJurisdictionName(jurisdiction, name)),
        get: (id: DurableObjectId, options?: DurableObjectNamespaceGetDurableObjectOptions) => ns.get(id, options),
      } as DurableObjectNamespace<T>;
    }
    byJurisdiction.set(jurisdiction, sub);
  }
  return sub;
}

/** The stub of the object `name` placed at `place`: in its jurisdiction, created with its region's location hint. */
export function placedStub<T extends Rpc.DurableObjectBranded | undefined>(
  ns: DurableObjectNamespace<T>,
  name: string,
  place: Placement,
): DurableObjectStub<T> {
  const sub = namespaceIn(ns, place.jurisdiction);
  return sub.get(objectId(sub, name), { locationHint: place.region });
}
