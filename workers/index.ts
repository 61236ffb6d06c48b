/** Worker entry: the edge app and the platform gateway Durable Object class the runtime binds as GATEWAY. */
import { createApp } from './app.js';

export { PlatformGateway } from './gateway/index.js';
export default createApp();
