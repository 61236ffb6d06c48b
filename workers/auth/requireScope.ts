/**
 * Least privilege per operation: each catalog entry names the scope it needs (`webapi` to read, `webapi.write` to
 * change, `webapi.admin` for destructive and administrative operations), and a caller whose token lacks it is
 * refused before anything else is looked at: v1 with 403, v2 with a `Forbidden` envelope, both with the RFC 6750
 * insufficient_scope challenge naming the scope.
 */
import type { Caller } from '../env.js';
import type { Operation } from '../../shared/catalog/index.js';
import { refusal, type ShapeContext, type ShapedResponse } from '../envelope/index.js';
import { insufficientScopeChallenge } from './oauthError.js';

export function scopeRefusal(entry: Operation, caller: Caller, ctx: ShapeContext): ShapedResponse | null {
  if (caller.scopes.includes(entry.scope)) return null;
  const message = `the access token lacks the ${entry.scope} scope this operation needs`;
  return refusal(ctx, {
    kind: 'Forbidden',
    message,
    headers: { 'WWW-Authenticate': insufficientScopeChallenge(entry.scope, message) },
  });
}
