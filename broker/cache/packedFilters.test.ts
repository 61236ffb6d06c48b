/**
 * Filters on packed tables: a catalog filter (`where`) on a table kept packed reads only the fields the table keeps
 * beside each row's text, since it is given the row's view, not the row (`KeyedTable`).
 */
import { describe, expect, it } from 'vitest';
import type { CachedList } from '../../shared/catalog/answer.js';
import { catalog } from '../../shared/catalog/index.js';
import { KINDS } from './pumpCache.js';

describe('filters on packed tables', () => {
  const filtered = catalog.flatMap((entry) => {
    const answer = entry.answer as CachedList<Record<string, unknown>> | { kind: string } | undefined;
    if (answer?.kind !== 'cachedList' || !entry.family) return [];
    const list = answer as CachedList<Record<string, unknown>>;
    const spec = KINDS[entry.family][list.table];
    return list.where && spec?.packed
      ? [
          {
            id: entry.id,
            where: list.where,
            kept: new Set([spec.key, ...Object.values(spec.indexes ?? {}), ...spec.packed]),
          },
        ]
      : [];
  });

  it('there are some', () => {
    expect(filtered.map((f) => f.id).length).toBeGreaterThan(0);
  });

  it.each(filtered.map((f) => [f.id, f] as const))('%s reads only kept fields', (_id, f) => {
    const read = new Set<string>();
    const row = new Proxy(
      {},
      {
        get: (_t, field) => {
          if (typeof field === 'string') read.add(field);
          return undefined;
        },
      },
    );
    const args = new Proxy({}, { get: () => '*' });
    f.where(row, args);
    expect(read.size).toBeGreaterThan(0);
    expect([...read].filter((field) => !f.kept.has(field))).toStrictEqual([]);
  });
});
