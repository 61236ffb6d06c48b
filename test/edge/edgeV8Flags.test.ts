/**
 * The local edge's workerd runs with the V8 flags of EDGE_V8_FLAGS (launcher/workerd-v8 puts them into the
 * configuration Miniflare writes): an isolate sees a flag that changes what its code can reach. What is tested is the
 * workerd the launcher starts (`startMiniflare`, which `startEdge` starts it with), so its two workers run an idle
 * module defining the edge's object classes instead of the edge's bundle, and no registry is migrated.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { inspectWorkers, type Inspector } from '../../bench/inspector.js';
import type { Miniflare } from 'miniflare';
import { EDGE_WORKER, miniflareOptions, OBJECTS_WORKER, startMiniflare, WRANGLER } from '../../launcher/edge.js';

/** A module for both workers: every Durable Object class wrangler.toml binds, idle, and a fetch handler. */
const IDLE_WORKER = [
  "import { DurableObject } from 'cloudflare:workers';",
  ...[...new Set(WRANGLER.durable_objects.bindings.map((b) => b.class_name))].map(
    (name) => `export class ${name} extends DurableObject {}`,
  ),
  'export default { fetch: () => new Response(null, { status: 404 }) };',
].join('\n');

let edge: { miniflare: Miniflare; close(): Promise<void> } | undefined;
let inspectors: Inspector[] = [];
afterEach(async () => {
  for (const i of inspectors) i.close();
  inspectors = [];
  await edge?.close();
  edge = undefined;
});

/** Runs `body` with the process's variables set (undefined: unset) as `vars` says, then puts them back as they were. */
async function withVariables<T>(vars: Record<string, string | undefined>, body: () => Promise<T>): Promise<T> {
  const before = Object.fromEntries(Object.keys(vars).map((name) => [name, process.env[name]]));
  const put = (values: Record<string, string | undefined>) => {
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
  put(vars);
  try {
    return await body();
  } finally {
    put(before);
  }
}

/** `typeof gc` in the edge worker's isolate and the objects' isolate of an edge started under `flags`. */
async function gcIn(flags: string | undefined): Promise<unknown[]> {
  const { miniflare } = await withVariables({ EDGE_V8_FLAGS: flags }, () =>
    startMiniflare(miniflareOptions(IDLE_WORKER, { inspect: true })),
  );
  edge = { miniflare, close: () => miniflare.dispose() };
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
    const wrapper = {
      MINIFLARE_WORKERD_PATH: join(import.meta.dirname, '../../launcher/workerd-v8'),
      GATEWAY_WORKERD: undefined,
    };
    await withVariables(wrapper, async () => {
      expect(await gcIn('--expose-gc')).toEqual(['function', 'function']);
      expect(process.env.GATEWAY_WORKERD).not.toMatch(/workerd-v8$/);
    });
  });

  it('refuses a value that is not V8 flags before starting anything', async () => {
    await expect(gcIn('--expose-gc; rm -rf /')).rejects.toThrow(
      'EDGE_V8_FLAGS must be V8 flags separated by spaces (--name or --name=value), or none, got "--expose-gc; rm -rf /"',
    );
  });
});
