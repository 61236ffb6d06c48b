/**
 * `npm run terminal`: serves the reference web terminal on 127.0.0.1 (TERMINAL_PORT, default 8788) and prints its
 * URL, pointed at the gateway `npm start` runs (GATEWAY_URL, default http://127.0.0.1:8787). Sign in there with an
 * API client (the demo client's id and secret from `npm start`'s banner) or a token. The page may connect to that
 * gateway alone (its Content-Security-Policy), whatever gateway a link to it names. Ctrl-C stops it.
 */
import '../shared/requireNode.js';
import { EnvironmentError, readEnvironment, terminalEnvironment } from '../shared/environment.js';
import { gatewayOrigin, serveTerminal } from '../launcher/terminal.js';

let port: number;
let gateway: string;
try {
  const env = readEnvironment(terminalEnvironment, process.env);
  port = env.TERMINAL_PORT;
  gateway = gatewayOrigin(env.GATEWAY_URL);
} catch (error) {
  if (error instanceof EnvironmentError) {
    for (const problem of error.problems) console.error(`terminal refused: ${problem}`);
    process.exit(1);
  }
  console.error(`terminal refused: ${(error as Error).message}`);
  process.exit(1);
}
const terminal = await serveTerminal({ gateway, port }).catch((error: Error) => {
  console.error(
    `terminal refused: ${error.message} (TERMINAL_PORT picks another port; the gateway's CORS_ORIGINS must then list it)`,
  );
  process.exit(1);
});
console.log(`
Web terminal: ${terminal.url}/

  It signs in at ${gateway} (GATEWAY_URL) and connects to no other gateway, whatever a link to it names.
  Sign in with the demo client (id and secret in npm start's banner) or paste a token.
  The gateway must list ${terminal.url} in CORS_ORIGINS (npm start does unless CORS_ORIGINS is set).

Ctrl-C stops it.
`);
const stop = () => void terminal.close().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
