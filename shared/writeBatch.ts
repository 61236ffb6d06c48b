/**
 * Frames sent in one turn of the event loop leave in one socket write (Node sockets only: the broker's edge links,
 * the simulator's manager connections). A peer that sends many requests in one TCP segment gets their answers in the
 * same turn, each with its own `ws.send`; left alone, every send is its own `writev` system call, which was a third
 * of the broker's time under load. Corking the socket at the first send of a turn and uncorking it once the turn's
 * synchronous work is done (a microtask) hands the kernel all of that turn's frames at once. Nothing waits
 * for a timer: the frames leave before the event loop goes on to the next I/O, so no frame is later than it would
 * have been, and the WebSocket frames themselves are unchanged.
 */
export interface Corkable {
  cork(): void;
  uncork(): void;
}

/** Returns `hold`: call it before each send; the sends of the current turn are flushed together after it. */
export function writeBatch(socket: Corkable): () => void {
  let held = false;
  const flush = () => {
    held = false;
    socket.uncork();
  };
  return () => {
    if (held) return;
    held = true;
    socket.cork();
    queueMicrotask(flush);
  };
}
