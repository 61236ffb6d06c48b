/**
 * The edge `npm run chaos` runs (bench-only, never deployed): the real edge app and its Durable Object classes, the
 * link and stream objects each with one more method, which closes the object's WebSocket to the broker it uses, as a
 * broker's restart or a network fault would: the object then goes through its own handling of a lost socket (calls in
 * flight on it answered as link loss, the next broker taken; a stream's clients told of the gap and resynced).
 * Called through `objectCall` (launcher/edge.ts) only; answers whether there was a socket to close.
 */
import { PlatformLink as RealPlatformLink } from '../../workers/gateway/index.js';
import { PlatformStream as RealPlatformStream } from '../../workers/streams/platformStream.js';

export * from '../../workers/index.js';
export { default } from '../../workers/index.js';

/** Closes `ws` as lost: a close code other than a normal close, so nothing takes it for an orderly goodbye. */
function dropSocket(ws: WebSocket | undefined): boolean {
  if (!ws) return false;
  try {
    ws.close(1011, 'chaos: socket dropped');
  } catch {
    /* already closing */
  }
  return true;
}

/** The members of the real classes this reaches (private there): a missing one fails loudly rather than drop nothing. */
interface LinkInside {
  brokers?: { currentLink?: { socket?: WebSocket } };
}
interface StreamInside {
  subscription?: { leg?: { ws: WebSocket } };
}

export class PlatformLink extends RealPlatformLink {
  /** Closes the socket to the broker in use; false when the object has none open. */
  // eslint-disable-next-line @typescript-eslint/require-await -- an RPC method: a hook that no longer matches rejects the call
  async dropBrokerSocket(): Promise<boolean> {
    const inside = this as unknown as LinkInside;
    if (!('brokers' in inside))
      throw new Error('PlatformLink has no `brokers` member: the chaos hook no longer matches it');
    return dropSocket(inside.brokers?.currentLink?.socket);
  }
}

export class PlatformStream extends RealPlatformStream {
  /** Closes the subscription's socket to the broker in use; false when the object has none open. */
  // eslint-disable-next-line @typescript-eslint/require-await -- an RPC method: a hook that no longer matches rejects the call
  async dropBrokerSocket(): Promise<boolean> {
    const inside = this as unknown as StreamInside;
    if (!inside.subscription || !('leg' in inside.subscription)) {
      throw new Error('PlatformStream has no `subscription.leg` member: the chaos hook no longer matches it');
    }
    return dropSocket(inside.subscription.leg?.ws);
  }
}
