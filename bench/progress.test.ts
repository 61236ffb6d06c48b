/**
 * Progress of `npm run bench:sim` on a fake clock: each line names the run and phase and the time spent; the time
 * left counts the measuring windows still to come and, once a world's set-up has been measured, its set-up in later
 * runs of that world (until then it says the estimate is a lower bound).
 */
import { describe, expect, it, vi } from 'vitest';
import { Progress } from './progress.js';

describe('bench progress', () => {
  it('says what runs, how long it took and how long remains', () => {
    vi.useFakeTimers();
    try {
      let now = 0;
      const lines: string[] = [];
      const progress = new Progress(
        [
          { label: 'PF4 small world', world: 'small', windowSeconds: 10 },
          { label: 'PF5 small world', world: 'small', windowSeconds: 10 },
        ],
        { write: (t: string) => lines.push(t) },
        () => now,
        5,
      );

      progress.nextRun();
      progress.phase('starting the simulator');
      expect(lines.pop()).toBe(
        '[bench 1/2 0:00] PF4 small world: starting the simulator…; at least 0:20 left in all (some start-ups not measured yet)\n',
      );
      now += 4000;
      progress.window();
      // Set-up of the small world measured (4 s): the second run's is estimated from it.
      expect(lines.pop()).toBe(
        '[bench 1/2 0:04] PF4 small world: measuring, 0:10 left of the 10 s window; about 0:24 left in all\n',
      );
      now += 5000;
      vi.advanceTimersByTime(5000);
      expect(lines.pop()).toBe(
        '[bench 1/2 0:09] PF4 small world: measuring, 0:05 left of the 10 s window; about 0:19 left in all\n',
      );
      now += 5000;
      progress.endRun();
      expect(lines.pop()).toBe('[bench 1/2 0:14] PF4 small world: done in 0:14; about 0:14 left in all\n');

      progress.nextRun();
      progress.phase('starting the simulator');
      expect(lines.pop()).toBe('[bench 2/2 0:14] PF5 small world: starting the simulator…; about 0:14 left in all\n');
      now += 3000;
      progress.phase('full resync');
      expect(lines.pop()).toBe('[bench 2/2 0:17] PF5 small world: full resync…; about 0:11 left in all\n');
      now += 1000;
      progress.window();
      now += 10_000;
      progress.endRun();
      progress.finish();
      expect(lines.at(-1)).toBe('bench: all 2 runs done in 0:28\n');
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('rewrites one countdown line in place on a terminal', () => {
    vi.useFakeTimers();
    try {
      let now = 0;
      let text = '';
      const progress = new Progress(
        [{ label: 'PF4 scale world', world: 'scale', windowSeconds: 3 }],
        {
          write: (t: string) => {
            text += t;
          },
          isTTY: true,
        },
        () => now,
      );
      progress.nextRun();
      progress.window();
      now += 1000;
      vi.advanceTimersByTime(1000);
      expect(text.split('\r\u001b[2K').filter(Boolean).at(-1)).toBe(
        '[bench 1/1 0:01] PF4 scale world: measuring, 0:02 left of the 3 s window; about 0:02 left in all',
      );
      progress.endRun();
      expect(text.endsWith('done in 0:01; about 0:00 left in all\n')).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});
