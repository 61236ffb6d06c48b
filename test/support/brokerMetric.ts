/** A broker's `/metrics` read by the end-to-end tests and the drills (no test framework here, so benches import it). */
/**
 * The sum of a broker's samples of metric `name` (its `/metrics` text) whose labels include `labels`; 0 when none.
 * A broker that does not answer reads as null.
 */
export async function brokerMetric(
  brokerUrl: string,
  name: string,
  labels: Record<string, string> = {},
): Promise<number | null> {
  const text = await fetch(`${brokerUrl}/metrics`).then(
    (r) => (r.ok ? r.text() : null),
    () => null,
  );
  if (text === null) return null;
  let sum = 0;
  for (const line of text.split('\n')) {
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!sample || sample[1] !== name) continue;
    const has = Object.fromEntries(
      [...(sample[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => has[k] === v)) sum += Number(sample[3]);
  }
  return sum;
}
