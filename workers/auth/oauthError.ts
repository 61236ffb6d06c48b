/**
 * OAuth error answers: RFC 6749 §5.2 bodies for the token endpoint and RFC 6750 §3 Bearer challenges for protected
 * resources. Both carry `{error, error_description}` as JSON so clients parse one shape.
 */
import { REALM, SCOPE } from './authConfig.js';

export type TokenErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'server_error'
  | 'not_found'
  | 'too_many_requests';

export type BearerErrorCode = 'invalid_request' | 'invalid_token' | 'insufficient_scope';

/** Headers every token endpoint answer carries: tokens and errors about credentials must never be cached. */
export const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' } as const;

const STATUS: Record<TokenErrorCode, number> = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  invalid_scope: 400,
  server_error: 500,
  not_found: 404,
  too_many_requests: 429,
};

/** A token endpoint error; `basicChallenge` adds the WWW-Authenticate RFC 6749 §5.2 requires after a failed Basic. */
/** The challenge header of an insufficient_scope refusal (for answers whose body is shaped elsewhere). */
export function insufficientScopeChallenge(scope: string, description: string): string {
  return `Bearer realm="${REALM}", error="insufficient_scope", error_description="${quoted(description)}", scope="${scope}"`;
}

export function tokenError(error: TokenErrorCode, description: string, basicChallenge = false): Response {
  const headers: Record<string, string> = { 'Content-Type': 'application/json', ...NO_STORE };
  if (basicChallenge) headers['WWW-Authenticate'] = `Basic realm="${REALM}", charset="UTF-8"`;
  return new Response(JSON.stringify({ error, error_description: description }), { status: STATUS[error], headers });
}

/** Quoted-string content for auth-params: no quotes, backslashes or control characters (RFC 6750 §3 restricts it). */
const quoted = (value: string) => value.replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, ' ');

/**
 * A Bearer challenge; no error code at all when the request carried no credentials (RFC 6750 §3.1). An
 * insufficient_scope challenge names the scope needed (`webapi` unless given).
 */
export function bearerError(error: BearerErrorCode | null, description = '', scope: string = SCOPE): Response {
  let challenge = `Bearer realm="${REALM}"`;
  let status = 401;
  let body: { error: string; error_description: string } = {
    error: 'invalid_token',
    error_description: 'an access token is required',
  };
  if (error) {
    challenge += `, error="${error}", error_description="${quoted(description)}"`;
    status = error === 'invalid_request' ? 400 : error === 'insufficient_scope' ? 403 : 401;
    if (error === 'insufficient_scope') challenge += `, scope="${scope}"`;
    body = { error, error_description: description };
  }
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', 'WWW-Authenticate': challenge },
  });
}
