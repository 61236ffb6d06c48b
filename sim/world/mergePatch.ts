/**
 * JSON merge patch (RFC 7386) of a stored record, for the PATCH operations: null removes a field, nested objects
 * merge, anything else replaces.
 */
export function mergePatch(target: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...target };
  for (const [field, value] of Object.entries(patch)) {
    if (value === null) delete out[field];
    else if (typeof value === 'object' && !Array.isArray(value) && typeof out[field] === 'object' && out[field] !== null && !Array.isArray(out[field])) {
      out[field] = mergePatch(out[field] as Record<string, unknown>, value as Record<string, unknown>);
    } else out[field] = value;
  }
  return out;
}
