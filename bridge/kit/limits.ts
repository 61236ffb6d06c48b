/**
 * The bounds a bridged server keeps per manager session, each an option with the default below. A session past
 * `maxBuffered` (bytes queued on its socket while live) or `maxHeldEvents` (change events held during its snapshot
 * or a hold) is closed with CLOSE_CODES.tooSlow: it reconnects and resyncs instead of holding the server's memory.
 */
export interface SessionLimits {
  /** The snapshot stops writing chunks while more than this many bytes are queued on the socket. */
  resyncHighWater: number;
  /** A live session with more than this many bytes queued is closed (1013). */
  maxBuffered: number;
  /** A session holding more than this many change events (coalesced keys counted once) is closed (1013). */
  maxHeldEvents: number;
}

export const DEFAULT_LIMITS: Readonly<SessionLimits> = {
  resyncHighWater: 4 * 1024 * 1024,
  maxBuffered: 64 * 1024 * 1024,
  maxHeldEvents: 1_000_000,
};

/** How often a paused snapshot looks again whether the socket has drained or the hold has ended. */
export const RESYNC_POLL_MS = 5;

/** The longest close reason a WebSocket close frame carries (bytes of UTF-8). */
export const MAX_CLOSE_REASON_BYTES = 123;
