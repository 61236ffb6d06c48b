/**
 * `npm start`: the embedded default on one machine — simulator (a demo PF4 and a demo PF5 platform), broker and edge,
 * with the local registry migrated and seeded. Prints where everything is and a ready-to-paste curl; Ctrl-C stops all.
 */
import { startStack } from './stack.js';

const dataDir = process.env.DATA_DIR ?? '.data';
const port = Number(process.env.PORT ?? 8787);
const verbose = process.env.LOG_LEVEL === 'debug';

const stack = await startStack({
  dataDir,
  edgePort: port,
  brokerPort: Number(process.env.BROKER_PORT ?? 8790),
  simPort: Number(process.env.SIM_PORT ?? 8791),
  seed: process.env.SIM_SEED ? Number(process.env.SIM_SEED) : undefined,
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
  broker      ${stack.brokerUrl}   (health: /healthz, metrics: /metrics; pid ${stack.broker.child.pid})
  simulator   ${stack.simUrl}   (servers demo-pf4, demo-pf5; pid ${stack.sim.child.pid})
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
const stop = async () => {
  if (stopping) return;
  stopping = true;
  console.log('stopping…');
  await stack.close();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
for (const service of [stack.sim, stack.broker]) {
  service.child.once('exit', (code) => {
    if (stopping) return;
    console.error(`${service.name} exited (code ${code}); stopping the stack`);
    void stop();
  });
}
