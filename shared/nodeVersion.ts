/**
 * The Node.js version every process of the project needs, and the one-line refusal of an older one. Kept equal to
 * `engines.node` in package.json (a unit test compares them). Pure; `requireNode.ts` applies it to the running process.
 */

export const REQUIRED_NODE = '20.19';

/** The refusal for `version` (`process.version`, e.g. `v18.19.0`), or null when it is recent enough. */
export function nodeVersionProblem(version: string, required = REQUIRED_NODE): string | null {
  const have = version
    .replace(/^v/, '')
    .split('.')
    .map((n) => Number.parseInt(n, 10));
  const need = required.split('.').map((n) => Number.parseInt(n, 10));
  for (let i = 0; i < need.length; i++) {
    const h = have[i] ?? 0;
    if (!Number.isFinite(h)) break;
    if (h > need[i]) return null;
    if (h < need[i]) {
      return `Node.js ${version} is too old: this project needs Node.js ${required} or newer (engines.node in package.json); install a newer Node.js and run again`;
    }
  }
  return null;
}
