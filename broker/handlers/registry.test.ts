import { describe, expect, it } from 'vitest';
import { brokerOps, catalog } from '../../shared/catalog/index.js';
import { handlers } from './registry.js';

describe('handler registry', () => {
  it('has a handler for every operation the catalog sends to the broker', () => {
    const missing = [...brokerOps].filter((op) => !handlers.has(op));
    expect(missing).toEqual([]);
  });

  it('serves nothing the catalog does not route, so no handler is dead code', () => {
    expect([...handlers.keys()].filter((op) => !brokerOps.has(op))).toEqual([]);
  });

  it('binds each family handler to the family of its catalog entries', () => {
    for (const entry of catalog.filter((e) => e.read !== 'local')) {
      expect(handlers.get(entry.op)!.family).toBe(entry.family);
    }
  });
});
