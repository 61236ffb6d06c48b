/** Worker entry: the edge app and the gateway Durable Object classes the runtime binds as LINKS and IDEMPOTENCY. */
import { createApp } from './app.js';

export { PlatformLink, IdempotencyLedger } from './gateway/index.js';
export default createApp();
