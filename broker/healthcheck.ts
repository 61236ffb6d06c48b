/**
 * The container's health check (Dockerfile HEALTHCHECK): asks this broker's own `/livez` over loopback and exits 0
 * when it answers 200, 1 otherwise. Liveness only: a broker whose trading server is down is still healthy (its
 * `/healthz` says which platform is down), so the orchestrator does not restart it for something a restart cannot
 * fix. Speaks HTTPS when the broker terminates TLS itself; its own certificate is not checked, the name would not
 * match 127.0.0.1 anyway and the probe carries nothing secret.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

const tls = Boolean(process.env.BROKER_TLS_CERT && process.env.BROKER_TLS_KEY);
const port = Number(process.env.BROKER_PORT || 8790);
const request = tls ? httpsRequest : httpRequest;
const req = request({ host: '127.0.0.1', port, path: '/livez', timeout: 2000, rejectUnauthorized: false }, (res) => {
  res.resume();
  process.exit(res.statusCode === 200 ? 0 : 1);
});
req.on('timeout', () => req.destroy(new Error('timeout')));
req.on('error', () => process.exit(1));
req.end();
