/**
 * The local edge's workerd runs with the V8 flags of EDGE_V8_FLAGS (launcher/workerd-v8 puts them into the
 * configuration Miniflare writes): an isolate sees a flag that changes what its code can reach.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { inspectWorkers, type Inspector } from '../../bench/inspector.js';
import { EDGE_WORKER, OBJECTS_WORKER, startEdge, type Edge } from '../../launcher/edge.js';

let edge: Edge | undefined;
let inspectors: Inspector[] = [];
afterEach(async () => {
  for (const i of inspectors) i.close();
  inspectors = [];
  await edge?.close();
  edge = undefined;
});

/** `typeof gc` in the edge worker's isolate and the objects' isolate of an edge started under `flags`. */
async function gcIn(flags: string | undefined): Promise<unknown[]> {
  const before = process.env.EDGE_V8_FLAGS;
  if (flags === undefined) delete process.env.EDGE_V8_FLAGS;
  else process.env.EDGE_V8_FLAGS = flags;
  try {
    edge = await startEdge({ inspect: true });
  } finally {
    if (before === undefined) delete process.env.EDGE_V8_FLAGS;
    else process.env.EDGE_V8_FLAGS = before;
  }
  inspectors = await inspectWorkers(await edge.miniflare.getInspectorURL(), [EDGE_WORKER, OBJECTS_WORKER]);
  return Promise.all(inspectors.map((i) => i.evaluate('typeof gc')));
}

describe('the local edge under EDGE_V8_FLAGS', () => {
  it('hands every flag to V8: --expose-gc gives both isolates gc()', async () => {
    expect(await gcIn('--max-heap-size=128 --expose-gc')).toEqual(['function', 'function']);
  });

  it('runs the default flags (the heap limit) without exposing gc()', async () => {
    expect(await gcIn(undefined)).toEqual(['undefined', 'undefined']);
  });

  it('runs workerd as Miniflare would with none', async () => {
    expect(await gcIn('none')).toEqual(['undefined', 'undefined']);
    expect(process.env.MINIFLARE_WORKERD_PATH).toBe(process.env.GATEWAY_WORKERD);
  });

  it('starts in a process that inherited the wrapper as MINIFLARE_WORKERD_PATH without the real workerd beside it', async () => {
    const inherited = { path: process.env.MINIFLARE_WORKERD_PATH, workerd: process.env.GATEWAY_WORKERD };
    process.env.MINIFLARE_WORKERD_PATH = join(import.meta.dirname, '../../launcher/workerd-v8');
    delete process.env.GATEWAY_WORKERD;
    try {
      expect(await gcIn('--expose-gc')).toEqual(['function', 'function']);
      expect(process.env.GATEWAY_WORKERD).not.toMatch(/workerd-v8$/);
    } finally {
      if (inherited.workerd === undefined) delete process.env.GATEWAY_WORKERD;
      else process.env.GATEWAY_WORKERD = inherited.workerd;
      if (inherited.path === undefined) delete process.env.MINIFLARE_WORKERD_PATH;
      else process.env.MINIFLARE_WORKERD_PATH = inherited.path;
    }
  });

  it('refuses a value that is not V8 flags before starting anything', async () => {
    await expect(gcIn('--expose-gc; rm -rf /')).rejects.toThrow('EDGE_V8_FLAGS must be V8 flags separated by spaces (--name or --name=value), or none, got "--expose-gc; rm -rf /"');
  });
});
