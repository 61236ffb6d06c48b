/**
 * The bounds a bridged server keeps on its manager connections, each an option (`BridgedServerOptions.limits`) with
 * the default below; `checkLimits` refuses a bound that is not a positive integer, or not one of these, naming it.
 *
 * - Memory a session holds: past `maxBuffered` bytes queued on its socket while live, or `maxHeldEvents` events or
 *   `maxHeldBytes` bytes of events held during its snapshot or a hold, and when its snapshot has not drained for
 *   `snapshotStallMs`, the session is closed with CLOSE_CODES.tooSlow: it reconnects and resyncs instead of holding
 *   the server's memory.
 * - Guessing and idling: a connection that has not logged in within `loginDeadlineMs`, or whose logins were refused
 *   `maxFailedLogins` times (after the answer to the last), is closed with CLOSE_CODES.loginPolicy.
 * - Load: past `maxSessions` open connections to one server an upgrade is refused with HTTP 503; a request arriving
 *   while `maxInFlight` of the session's requests wait for their answers is answered at once with the family's
 *   too-frequent code (TOO_FREQUENT_CODE). The broker keeps at most 16 of its callers' commands in flight per
 *   session, plus its login and keep-alive Pings: the default is far above what it sends.
 */
export interface SessionLimits {
  /** The snapshot stops writing chunks while more than this many bytes are queued on the socket. */
  resyncHighWater: number;
  /** A live session with more than this many bytes queued is closed (1013). */
  maxBuffered: number;
  /** A session holding more than this many change events (coalesced keys counted once) is closed (1013). */
  maxHeldEvents: number;
  /** A session holding more than this many bytes of change events (a coalesced key at its last) is closed (1013). */
  maxHeldBytes: number;
  /** A snapshot paused on a full socket this long without the socket draining at all closes its session (1013). */
  snapshotStallMs: number;
  /** A connection not logged in this long after it opened is closed (4008). */
  loginDeadlineMs: number;
  /** A connection is closed (4008) after the answer to this many refused logins (malformed logins do not count). */
  maxFailedLogins: number;
  /** Open connections (logged in or not) one server takes; past them an upgrade is refused with 503. */
  maxSessions: number;
  /** Requests of one session waiting for their answers; past them a request is answered with the too-frequent code. */
  maxInFlight: number;
}

export const DEFAULT_LIMITS: Readonly<SessionLimits> = {
  resyncHighWater: 4 * 1024 * 1024,
  maxBuffered: 64 * 1024 * 1024,
  maxHeldEvents: 1_000_000,
  maxHeldBytes: 256 * 1024 * 1024,
  snapshotStallMs: 60_000,
  loginDeadlineMs: 10_000,
  maxFailedLogins: 3,
  maxSessions: 64,
  maxInFlight: 256,
};

/** The defaults with `given` over them (an undefined bound keeps its default); throws naming a bad bound. */
export function checkLimits(given: Partial<SessionLimits> = {}): SessionLimits {
  const limits: SessionLimits = { ...DEFAULT_LIMITS };
  for (const [name, value] of Object.entries(given)) {
    if (!(name in DEFAULT_LIMITS))
      throw new Error(`limits.${name} is not a session limit (${Object.keys(DEFAULT_LIMITS).join(', ')})`);
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 1) throw new Error(`limits.${name} must be an integer of at least 1`);
    limits[name as keyof SessionLimits] = value;
  }
  return limits;
}

/** How often a paused snapshot looks again whether the socket has drained or the hold has ended. */
export const RESYNC_POLL_MS = 5;

/** The longest close reason a WebSocket close frame carries (bytes of UTF-8). */
export const MAX_CLOSE_REASON_BYTES = 123;
