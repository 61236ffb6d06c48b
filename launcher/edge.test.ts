import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_EDGE_V8_FLAGS } from '../shared/environment.js';
import { edgeV8Flags, removeOrphanedMemoryFolders, withBusyRetries } from './edge.js';

describe('withBusyRetries', () => {
  const busy = () => new Error('D1_ERROR: database is locked: SQLITE_BUSY');

  it('runs again while SQLite finds the file busy, then answers what the run answers', async () => {
    let runs = 0;
    const waits: number[] = [];
    const answer = await withBusyRetries(
      () => (++runs < 3 ? Promise.reject(busy()) : Promise.resolve('migrated')),
      10,
      (n) => {
        waits.push(n);
        return 0;
      },
    );
    expect(answer).toBe('migrated');
    expect(runs).toBe(3);
    expect(waits).toEqual([1, 2]);
  });

  it("runs again on workerd's masked internal error, which local D1 reports for the same contention", async () => {
    let runs = 0;
    const masked = () => new Error('D1_ERROR: internal error; reference = o9sso0m850ikrv9oh93pr9b5');
    expect(
      await withBusyRetries(
        () => (++runs < 2 ? Promise.reject(masked()) : Promise.resolve('migrated')),
        10,
        () => 0,
      ),
    ).toBe('migrated');
    expect(runs).toBe(2);
  });

  it('throws the last busy failure once the attempts are spent', async () => {
    let runs = 0;
    await expect(
      withBusyRetries(
        () => {
          runs++;
          return Promise.reject(busy());
        },
        4,
        () => 0,
      ),
    ).rejects.toThrow(/SQLITE_BUSY/);
    expect(runs).toBe(4);
  });

  it('throws any other failure at once', async () => {
    let runs = 0;
    await expect(
      withBusyRetries(
        () => {
          runs++;
          return Promise.reject(new Error('no such table: organizations'));
        },
        4,
        () => 0,
      ),
    ).rejects.toThrow(/no such table/);
    expect(runs).toBe(1);
  });
});

describe('removeOrphanedMemoryFolders', () => {
  it("removes the edges' memory folders of processes that are gone, and nothing else", () => {
    const root = mkdtempSync(join(tmpdir(), 'memory-root-'));
    try {
      for (const name of [
        'gateway-edge-111-aaaa',
        'gateway-edge-222-bbbb',
        'gateway-edge-333-cccc',
        'gateway-edge-x-dddd',
        'other-111-eeee',
      ]) {
        mkdirSync(join(root, name, 'do'), { recursive: true });
      }
      const removed = removeOrphanedMemoryFolders(root, (pid) => pid === 222);
      expect(removed.sort()).toEqual(['gateway-edge-111-aaaa', 'gateway-edge-333-cccc']);
      expect(readdirSync(root).sort()).toEqual(['gateway-edge-222-bbbb', 'gateway-edge-x-dddd', 'other-111-eeee']);
      // With the default check, this process's folder stays (it is alive).
      rmSync(join(root, 'gateway-edge-222-bbbb'), { recursive: true });
      mkdirSync(join(root, `gateway-edge-${process.pid}-ffff`));
      expect(removeOrphanedMemoryFolders(root)).toEqual([]);
      expect(readdirSync(root)).toContain(`gateway-edge-${process.pid}-ffff`);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('answers nothing for a root that does not exist', () => {
    expect(removeOrphanedMemoryFolders(join(tmpdir(), 'no-such-memory-root-here'))).toEqual([]);
  });
});

describe('edgeV8Flags', () => {
  it('gives the default when unset or empty, V8 options split on spaces, and none for `none`', () => {
    expect(edgeV8Flags({})).toStrictEqual([...DEFAULT_EDGE_V8_FLAGS]);
    expect(DEFAULT_EDGE_V8_FLAGS).toStrictEqual(['--max-heap-size=128']);
    expect(edgeV8Flags({ EDGE_V8_FLAGS: '  ' })).toStrictEqual(['--max-heap-size=128']);
    expect(edgeV8Flags({ EDGE_V8_FLAGS: ' --max-heap-size=64   --expose-gc ' })).toStrictEqual([
      '--max-heap-size=64',
      '--expose-gc',
    ]);
    expect(edgeV8Flags({ EDGE_V8_FLAGS: 'none' })).toStrictEqual([]);
  });

  it('refuses anything but --name or --name=value, naming the variable, the rule and the value', () => {
    expect(() => edgeV8Flags({ EDGE_V8_FLAGS: 'max-heap-size=64' })).toThrow(
      'EDGE_V8_FLAGS must be V8 flags separated by spaces (--name or --name=value), or none, got "max-heap-size=64"',
    );
    for (const wrong of ['--expose-gc;reboot', '--x=$(id)', `--x=${'1'.repeat(65)}`, '--expose-gc none']) {
      expect(() => edgeV8Flags({ EDGE_V8_FLAGS: wrong })).toThrow(/^EDGE_V8_FLAGS must be V8 flags/);
    }
  });
});
