/**
 * A value read from parsed JSON as text: a primitive as `String` writes it, an array as `String` joins it (each
 * element written the same way), any other object as its JSON text (`String` would write `[object Object]`).
 */
export function valueText(value: unknown): string {
  if (Array.isArray(value))
    return value.map((v: unknown) => (v === null || v === undefined ? '' : valueText(v))).join(',');
  if (typeof value === 'object' && value !== null) return JSON.stringify(value);
  return String(value);
}
