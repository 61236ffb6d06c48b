/**
 * Group and symbol masks as the manager interface takes them: comma-separated patterns, `*` for any run of
 * characters, a leading `!` to exclude (for example `real\*,!real\vip`). Names are matched in full.
 */
export function matchesMask(value: string, mask: string): boolean {
  let included = false;
  for (const part of mask
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.length > 0)) {
    const exclude = part.startsWith('!');
    const pattern = exclude ? part.slice(1) : part;
    const regex = new RegExp(
      `^${pattern
        .split('*')
        .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
    );
    if (regex.test(value)) {
      if (exclude) return false;
      included = true;
    }
  }
  return included;
}
