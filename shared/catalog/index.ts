/** The operation catalog: every operation the gateway serves, one declarative entry each. */
import type { Operation } from './operation.js';
import { registryOperations } from './registry.js';
import { pf4Operations } from './pf4.js';
import { pf5Operations } from './pf5.js';

export * from './operation.js';
export * from './fields.js';

export const catalog: readonly Operation[] = [...registryOperations, ...pf4Operations, ...pf5Operations];

const ids = new Set<string>();
for (const entry of catalog) {
  if (ids.has(entry.id)) throw new Error(`duplicate catalog id ${entry.id}`);
  ids.add(entry.id);
}

/** Handler names the broker must implement (every entry that reaches a trading server). */
export const brokerOps: ReadonlySet<string> = new Set(catalog.filter((e) => e.read !== 'local').map((e) => e.op));

export function findOperation(id: string): Operation | undefined {
  return catalog.find((e) => e.id === id);
}
