/**
 * Waits for a condition itself instead of sleeping: polls `probe` until it gives a truthy value and returns it. The
 * bound only fails a test that hangs; it is never what makes a test pass.
 */
export async function until<T>(
  probe: () => T | Promise<T>,
  what: string,
  boundMs = 10_000,
  everyMs = 20,
): Promise<NonNullable<T>> {
  const end = Date.now() + boundMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`no ${what} within ${boundMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
