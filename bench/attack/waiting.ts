/** Waiting in the attack drill: a pause, and a condition polled until it holds or a bound passes. */
export const sleep = (milliseconds: number) => new Promise((r) => setTimeout(r, milliseconds));

/** Polls `probe` every `everyMs` until it holds (true) or `timeoutMs` passed (false): a drill reports, it does not throw. */
export async function until(probe: () => boolean, timeoutMs: number, everyMs = 50): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > end) return false;
    await sleep(everyMs);
  }
  return true;
}
