/**
 * The soak's verdict on the edge's memory: a least-squares line through the samples of the run's last half, its rise
 * over that half and the rise's standard error, judged against the bound.
 */
import { describe, expect, it } from 'vitest';
import { liveHeap, memoryVerdict, type MemorySample } from './soak.js';

const MB = 1048576;
const sample = (at: number, edgeMb: number | null): MemorySample => ({
  at,
  edge: edgeMb === null ? null : edgeMb * MB,
  broker: null,
  sim: null,
  brokerHeap: null,
  held: null,
});

describe('memoryVerdict', () => {
  it('fits the last half only: a steep first half does not count, a level second half is flat with no error', () => {
    const memory = [
      sample(0, 100),
      sample(60, 300),
      sample(120, 400),
      sample(180, 400),
      sample(240, 400),
      sample(300, 400),
    ];
    expect(memoryVerdict(memory, 300, 50)).toStrictEqual({ riseMb: 0, errorMb: 0, flatMb: 50, flat: true, samples: 3 });
  });

  it("reads a steady rise as the fitted line's rise over the half, judged against the bound", () => {
    // 10 MB a minute over the last 3 minutes: 30 MB.
    const memory = [0, 60, 120, 180, 240, 300, 360].map((at) => sample(at, 200 + (10 * at) / 60));
    const v = memoryVerdict(memory, 360, 25)!;
    expect(v.riseMb).toBeCloseTo(30, 9);
    expect(v.errorMb).toBeCloseTo(0, 9);
    expect(v).toMatchObject({ flat: false, samples: 4 });
    expect(memoryVerdict(memory, 360, 30)!.flat).toBe(true);
  });

  it('sees through a sawtooth: swings around a level give a small rise with a large error', () => {
    const memory = [300, 360, 420, 480, 540, 600].map((at, i) => sample(at, i % 2 === 0 ? 450 : 530));
    const v = memoryVerdict(memory, 600, 50)!;
    // Least squares through 450, 530, 450, 530, 450, 530 at one-minute steps: slope 80/17.5·1.5 per minute.
    expect(v.riseMb).toBeCloseTo((80 * 1.5 * 5) / 17.5, 6);
    expect(v.errorMb).toBeGreaterThan(v.riseMb);
    expect(v.flat).toBe(true);
  });

  it('gives no verdict with fewer than 3 samples in the last half, and skips samples without a figure', () => {
    expect(memoryVerdict([sample(0, 100), sample(60, 200), sample(120, 300)], 120, 50)).toBeNull();
    expect(memoryVerdict([sample(60, 100), sample(90, null), sample(120, 200)], 120, 50)).toBeNull();
  });

  it('judges the heap the isolates hold (both together) when asked, skipping samples without heap figures', () => {
    const withHeap = (at: number, rss: number, edge: number | null, objects: number): MemorySample => ({
      ...sample(at, rss),
      heap: edge === null ? null : { edge: edge * MB, objects: objects * MB },
    });
    // RSS climbs 40 MB a minute; the heap stays at 20 + 20 MB but for one sample the inspector did not answer.
    const memory = [0, 60, 120, 180, 240].map((at, i) => withHeap(at, 300 + (40 * at) / 60, i === 3 ? null : 20, 20));
    expect(memoryVerdict(memory, 240, 50)!).toMatchObject({ flat: false, samples: 3 });
    expect(memoryVerdict(memory, 240, 50)!.riseMb).toBeCloseTo(80, 9);
    expect(memoryVerdict(memory, 240, 50, liveHeap)).toBeNull();
    const all = [0, 60, 120, 180, 240, 300].map((at) => withHeap(at, 300 + (40 * at) / 60, 20 + at / 600, 20));
    const v = memoryVerdict(all, 300, 50, liveHeap)!;
    // The last half is 180, 240 and 300 s: 0.1 MB a minute over its 2 minutes.
    expect(v.riseMb).toBeCloseTo(0.2, 9);
    expect(v).toMatchObject({ flat: true, samples: 3 });
  });
});
