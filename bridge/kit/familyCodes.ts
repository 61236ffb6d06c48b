/**
 * The result codes the kit answers with itself, per family: bad arguments (a malformed request or login, an unknown
 * command, a second login, no common protocol version), no rights (a command before login, a refused right), an
 * internal error (a handler's unexpected exception) and too frequent (a request past the session's bound of requests
 * in flight, TOO_FREQUENT_CODE). Drivers answer everything else with their own codes.
 */
import type { Family } from '../../shared/protocol.js';
import { PF4_RESULT, PF5_RESULT, TOO_FREQUENT_CODE } from '../../shared/resultCodes.js';

export interface FamilyCodes {
  badArgs: number;
  noRights: number;
  internal: number;
  tooFrequent: number;
}

export const FAMILY_CODES: Readonly<Record<Family, FamilyCodes>> = {
  PF4: {
    badArgs: PF4_RESULT.InvalidData,
    noRights: PF4_RESULT.NotEnoughRights,
    internal: PF4_RESULT.UnhandledException,
    tooFrequent: TOO_FREQUENT_CODE.PF4,
  },
  PF5: {
    badArgs: PF5_RESULT.ErrParams,
    noRights: PF5_RESULT.ErrPermissions,
    internal: PF5_RESULT.Error,
    tooFrequent: TOO_FREQUENT_CODE.PF5,
  },
};
