/**
 * The bridge kit: the trading-server side of the manager protocol (docs/manager-protocol.md), for anyone putting a
 * trading server behind the broker. Implement a `BridgeDriver` (driver.ts says what each member means), wrap it in a
 * `BridgedServer`, and serve one or more of them with `createBridgeListener`:
 *
 *   const server = new BridgedServer(myDriver);
 *   createBridgeListener([server], { allow }).listen(port, host);        // ws://
 *   createBridgeListener([server], { allow, tls: { cert, key } })...      // wss://
 *
 * `server.resync()` streams a new snapshot to every pumping session (after the bridge's link to its trading server
 * was re-established); the bounds each session is kept to are `SessionLimits` (limits.ts), each an option.
 *
 * The kit imports only shared/ and npm packages.
 */
export type {
  BridgeDriver,
  BridgeLog,
  ChangeEmit,
  ChangeOp,
  CommandHandler,
  GatedRequest,
  LoginAttempt,
  LoginVerdict,
  Observer,
  Refusal,
  Session,
  SnapshotPart,
} from './driver.js';
export { BridgedServer, type BridgedServerOptions } from './bridgedServer.js';
export {
  createBridgeListener,
  pathOf,
  replyJson,
  type ListenerOptions,
  type ListenerTls,
  type Routes,
} from './listener.js';
export { CLOSE_SNAPSHOT_FAILED, type ManagerSession } from './managerSession.js';
export { ResultError } from './resultError.js';
export { FAMILY_CODES, type FamilyCodes } from './familyCodes.js';
export { checkLimits, DEFAULT_LIMITS, type SessionLimits } from './limits.js';
export { SNAPSHOT_KINDS } from './snapshotOrder.js';
export { checkLogin, type CheckedLogin } from './loginArgs.js';
export { isLoopback, peerFilter } from './peers.js';
export { CHANGE_KINDS, CLOSE_CODES, type ChangeKind, type Family } from '../../shared/protocol.js';
