/**
 * The web terminal's Content-Security-Policy, as the edge serves it at /terminal/ (`workers/terminal/terminal.ts`) and
 * `npm run terminal` serves it (`launcher/terminal.ts`): the page's own scripts, styles and images only, and
 * connections to `connectSrc` alone (its own origin on the edge, the gateway it was started for on its own).
 */
export function terminalContentPolicy(connectSrc: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src ${connectSrc}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}
