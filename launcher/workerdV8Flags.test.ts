import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serializeConfig } from 'miniflare';
import { afterAll, describe, expect, it } from 'vitest';
import { v8FlagsOf, withV8Flags } from './workerdV8Flags.mjs';

/** A configuration as Miniflare writes it for workerd: a worker with a module of some size, a socket. */
function config(v8Flags?: string[]): Buffer {
  return serializeConfig({
    services: [
      {
        name: 'edge',
        worker: {
          modules: [{ name: 'edge.js', esModule: 'export default { fetch() {} };'.repeat(500) }],
          compatibilityDate: '2025-01-01',
        },
      },
    ],
    sockets: [{ name: 'entry', address: '127.0.0.1:0', service: { name: 'edge' } }],
    ...(v8Flags ? { v8Flags } : {}),
  });
}

describe('withV8Flags', () => {
  it("sets Config.v8Flags as Miniflare's own encoder would, text for text", () => {
    const flags = ['--max-heap-size=128', '--expose-gc', '--stack-size=984'];
    expect(v8FlagsOf(config(flags))).toEqual(flags);
    expect(v8FlagsOf(config())).toEqual([]);
    expect(v8FlagsOf(withV8Flags(config(), flags))).toEqual(flags);
  });

  it('leaves every other byte of the configuration where it was, segment 0 growing by the list alone', () => {
    const before = config();
    const after = Buffer.from(withV8Flags(before, ['--max-heap-size=128']));
    const words = before.readUInt32LE(4);
    // One list pointer, then the 20-byte text padded to 3 words.
    expect(after.readUInt32LE(4)).toBe(words + 1 + 3);
    expect(after.length).toBe(before.length + 4 * 8);
    const changed: number[] = [];
    for (let i = 8; i < before.length; i += 8)
      if (!before.subarray(i, i + 8).equals(after.subarray(i, i + 8))) changed.push(i);
    // Only the root struct's v8Flags pointer.
    expect(changed).toHaveLength(1);
    expect(before.readBigUInt64LE(changed[0])).toBe(0n);
  });

  it('replaces flags the configuration already has, and empties them', () => {
    expect(v8FlagsOf(withV8Flags(config(['--expose-gc']), ['--max-heap-size=64']))).toEqual(['--max-heap-size=64']);
    expect(v8FlagsOf(withV8Flags(config(['--expose-gc']), []))).toEqual([]);
  });

  it('refuses what is not a whole configuration', () => {
    const whole = config();
    expect(() => withV8Flags(whole.subarray(0, 4), ['--expose-gc'])).toThrow(/too short/);
    expect(() => withV8Flags(whole.subarray(0, whole.length - 8), ['--expose-gc'])).toThrow(/segment table says/);
    const farRoot = Buffer.from(whole);
    farRoot.writeBigUInt64LE(2n, 8);
    expect(() => withV8Flags(farRoot, ['--expose-gc'])).toThrow(/not a struct in segment 0/);
  });
});

describe('launcher/workerd-v8', () => {
  const dir = mkdtempSync(join(tmpdir(), 'workerd-v8-test-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  // A stand-in for workerd: keeps its arguments and the configuration it was given on standard input.
  const standIn = join(dir, 'workerd');
  writeFileSync(standIn, `#!/bin/bash\nprintf '%s\\n' "$@" > "${dir}/args"\ncat > "${dir}/config"\n`);
  chmodSync(standIn, 0o755);
  const run = (input: Buffer) => {
    rmSync(join(dir, 'config'), { force: true });
    return spawnSync(join(import.meta.dirname, 'workerd-v8'), ['serve', '--binary', '-'], {
      input,
      env: {
        ...process.env,
        GATEWAY_WORKERD: standIn,
        GATEWAY_NODE: process.execPath,
        GATEWAY_V8_FLAGS: '--max-heap-size=128 --expose-gc',
        NODE_OPTIONS: '--require=/nonexistent-preload.js',
      },
    });
  };

  it("becomes workerd with Miniflare's arguments and the configuration carrying the flags", () => {
    const result = run(config());
    expect(result.stderr.toString()).toBe('');
    expect(result.status).toBe(0);
    expect(readFileSync(join(dir, 'args'), 'utf8')).toBe('serve\n--binary\n-\n');
    const given = readFileSync(join(dir, 'config'));
    expect(given.equals(Buffer.from(withV8Flags(config(), ['--max-heap-size=128', '--expose-gc'])))).toBe(true);
  });

  it('stops before workerd when the configuration cannot be patched, instead of handing it an empty one', () => {
    const result = run(Buffer.from('not a configuration'));
    expect(result.status).not.toBe(0);
    expect(result.stderr.toString()).toMatch(/too short|segment table/);
    expect(existsSync(join(dir, 'config'))).toBe(false);
  });
});
