/**
 * `npm start`: the embedded default on one machine — simulator (a demo PF4 and a demo PF5 platform), broker and edge,
 * with the local registry migrated and seeded. BROKERS=2 (up to 8) starts that many brokers, each serving both demo
 * platforms, the first preferred (the edge's BROKER_URL lists them in order). Prints where everything is and a
 * ready-to-paste curl; Ctrl-C stops all.
 */
import '../shared/requireNode.js';
import { EnvironmentError, readEnvironment, startEnvironment } from '../shared/environment.js';
import { startStack } from '../launcher/stack.js';
import { TERMINAL_ORIGIN } from '../launcher/terminal.js';

// Every variable checked before anything starts: one line per wrong one, naming it.
const env = (() => {
  try {
    return readEnvironment(startEnvironment, process.env);
  } catch (error) {
    if (!(error instanceof EnvironmentError)) throw error;
    for (const problem of error.problems) console.error(`start refused: ${problem}`);
    process.exit(1);
  }
})();
const dataDir = env.DATA_DIR;
const port = env.PORT;
const verbose = env.LOG_LEVEL === 'debug';
// Unless set, the origin `npm run terminal` serves the reference web terminal on may call the local gateway.
const corsOrigins = env.CORS_ORIGINS ?? TERMINAL_ORIGIN;

const stack = await startStack({
  dataDir,
  edgePort: port,
  brokerPort: env.BROKER_PORT,
  brokers: env.BROKERS,
  simPort: env.SIM_PORT,
  seed: env.SIM_SEED,
  edgeVars: { CORS_ORIGINS: corsOrigins },
  // A crashed simulator or broker is started again with backoff while the edge answers NoConnect (or moves to the
  // next broker); a crash loop stops the stack with the supervisor's message.
  supervise: {
    onGiveUp: (message) => {
      console.error(`${message}; stopping the stack`);
      void stop(1);
    },
  },
  log: (line) => {
    // Child processes log JSON lines; errors and warnings always show, the rest with LOG_LEVEL=debug.
    if (verbose || /"level":"(error|warn)"/.test(line) || !line.includes('{')) console.log(line);
  },
}).catch((error: Error) => {
  console.error(`start failed: ${error.message}`);
  process.exit(1);
});

const base = stack.edgeUrl;
console.log(`
Trade platform gateway is up.

  edge        ${base}          (health: ${base}/healthz, API description: ${base}/openapi.json)
  docs        ${base}/docs     (interactive API reference: Authorize with the demo client, then Try it out)
  browsers    CORS_ORIGINS ${corsOrigins}${env.CORS_ORIGINS ? '' : " (npm run terminal's origin; set CORS_ORIGINS to list others)"}
  terminal    npm run terminal, then ${TERMINAL_ORIGIN}${env.TERMINAL ? `   (or ${base}/terminal/: TERMINAL=1)` : ''}
${stack.brokers.map((b, i) => `  ${(stack.brokers.length === 1 ? 'broker' : `broker-${i}`).padEnd(11)} ${stack.brokerUrls[i]}   (health: /healthz, metrics: /metrics; pid ${b.child.pid})\n`).join('')}  simulator   ${stack.simUrl}   (servers demo-pf4, demo-pf5; pid ${stack.sim.child.pid})
  data        ${stack.dataDir}

  demo client   id ${stack.clientId}   secret ${stack.clientSecret === 'demo-secret' ? 'demo-secret' : '(from DEMO_CLIENT_SECRET)'}
  demo PF4      ${stack.platforms.pf4}
  demo PF5      ${stack.platforms.pf5}

Try it:

  TOKEN=$(curl -s -u ${stack.clientId}:${stack.clientSecret === 'demo-secret' ? 'demo-secret' : '$DEMO_CLIENT_SECRET'} -d grant_type=client_credentials -d scope=webapi ${base}/connect/token | sed -E 's/.*"access_token":"([^"]+)".*/\\1/')
  curl -s -H "Authorization: Bearer $TOKEN" ${base}/api/v2/PF4/${stack.platforms.pf4}/UsersRequest?limit=3

Ctrl-C stops everything.
`);

let stopping = false;
async function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  console.log('stopping…');
  await stack.close();
  process.exit(code);
}
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
