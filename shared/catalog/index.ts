/** The operation catalog: every operation the gateway serves, one declarative entry each. */
import type { Operation } from './operation.js';
import { registryOperations } from './registry.js';
import { webhookOperations } from './webhooks.js';
import { commonV2 } from './v2/common.js';
import { pf4V2Areas } from './v2/pf4/index.js';
import { pf5V2 } from './v2/pf5.js';
import { pf4V1 } from './v1/pf4.js';
import { pf5V1 } from './v1/pf5.js';

export * from './operation.js';
export * from './fields.js';
export type * from './answer.js';

/** Entries of a group object; a family-agnostic declaration contributes one entry per family. */
const entries = (group: Record<string, Operation | readonly Operation[]>): Operation[] => Object.values(group).flat();

export const catalog: readonly Operation[] = [
  ...entries(registryOperations),
  ...entries(webhookOperations),
  ...entries(commonV2),
  ...pf4V2Areas.flatMap(entries),
  ...entries(pf5V2),
  ...entries(pf4V1),
  ...entries(pf5V1),
];

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
