/**
 * JSON merge patch (RFC 7386) of a stored record, for the PATCH operations: null removes a field, nested objects
 * merge, anything else replaces. A record of fixed shape cannot lose a field, so there removing one means emptying it:
 * `cleared`, when given, answers what a null member leaves in place of the field (given the member's path, `a.b` when
 * nested), or undefined to remove it as usual; it may also refuse by throwing.
 */
export function mergePatch(
  target: Record<string, unknown>,
  patch: Record<string, unknown>,
  cleared?: (path: string) => unknown,
  at = '',
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...target };
  for (const [field, value] of Object.entries(patch)) {
    const path = at ? `${at}.${field}` : field;
    const empty = value === null ? cleared?.(path) : undefined;
    if (value === null && empty === undefined) delete out[field];
    else if (value === null) out[field] = empty;
    else if (
      typeof value === 'object' &&
      !Array.isArray(value) &&
      typeof out[field] === 'object' &&
      out[field] !== null &&
      !Array.isArray(out[field])
    ) {
      out[field] = mergePatch(out[field] as Record<string, unknown>, value as Record<string, unknown>, cleared, path);
    } else out[field] = value;
  }
  return out;
}
