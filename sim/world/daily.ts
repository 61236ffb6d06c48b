/** The servers' daily clock: rollover runs at every midnight UTC (server time). */
import { DAY_MS } from './people.js';

/** Calls `run` at each coming midnight UTC until the answered cancel is called; the timer never holds the process. */
export function atEveryMidnight(run: (now: number) => void): () => void {
  let timer: NodeJS.Timeout;
  const arm = () => {
    timer = setTimeout(
      () => {
        run(Date.now());
        arm();
      },
      DAY_MS - (Date.now() % DAY_MS),
    );
    timer.unref();
  };
  arm();
  return () => clearTimeout(timer);
}
