import { describe, expect, it } from 'vitest';
import { withBusyRetries } from './edge.js';

describe('withBusyRetries', () => {
  const busy = () => new Error('wrangler d1 migrations apply failed (exit 1): SQLite failed; database is locked: SQLITE_BUSY');

  it('runs again while SQLite finds the file busy, then answers what the run answers', async () => {
    let runs = 0;
    const waits: number[] = [];
    const answer = await withBusyRetries(async () => { if (++runs < 3) throw busy(); return 'migrated'; }, 10, (n) => { waits.push(n); return 0; });
    expect(answer).toBe('migrated');
    expect(runs).toBe(3);
    expect(waits).toEqual([1, 2]);
  });

  it('throws the last busy failure once the attempts are spent', async () => {
    let runs = 0;
    await expect(withBusyRetries(async () => { runs++; throw busy(); }, 4, () => 0)).rejects.toThrow(/SQLITE_BUSY/);
    expect(runs).toBe(4);
  });

  it('throws any other failure at once', async () => {
    let runs = 0;
    await expect(withBusyRetries(async () => { runs++; throw new Error('no such table: organizations'); }, 4, () => 0)).rejects.toThrow(/no such table/);
    expect(runs).toBe(1);
  });
});
