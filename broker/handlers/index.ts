/** Operation handlers of the broker, looked up by catalog operation name. */
export { handlers, type RegisteredHandler } from './registry.js';
export type { Handler, HandlerContext, HandlerResult } from './handler.js';
export { encodeCursor, decodeCursor, BAD_CURSOR } from './paging.js';
