/** Placeholder entry so the edge harness builds; replaced by the gateway app. */
import { DurableObject } from 'cloudflare:workers';
export class PlatformGateway extends DurableObject {}
export default { fetch: () => new Response('ok') };
