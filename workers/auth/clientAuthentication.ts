/**
 * Client authentication at the token endpoint (RFC 6749 §2.3.1): client_secret_basic or client_secret_post, never
 * both. Only extracts the presented credentials; checking them against the registry is the endpoint's job.
 */

export type PresentedCredentials =
  | { method: 'client_secret_basic' | 'client_secret_post'; clientId: string; clientSecret: string }
  | { method: 'none' }
  /** Presented but unusable; `basic` says whether the Basic scheme was the attempted one (it needs a challenge). */
  | { method: 'invalid'; reason: 'malformed' | 'multiple' | 'incomplete'; basic: boolean };

/** RFC 6749 §2.3.1: Basic credentials are form-urlencoded before base64, so `+` is a space and `%3A` a colon. */
function formDecode(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, ' '));
}

function decodeBasic(token: string): { clientId: string; clientSecret: string } | null {
  if (!/^[A-Za-z0-9+/]+=*$/.test(token)) return null;
  try {
    const bytes = Uint8Array.from(atob(token), (ch) => ch.charCodeAt(0));
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
    const colon = text.indexOf(':');
    if (colon < 0) return null;
    const clientId = formDecode(text.slice(0, colon));
    const clientSecret = formDecode(text.slice(colon + 1));
    return clientId && clientSecret ? { clientId, clientSecret } : null;
  } catch {
    return null;
  }
}

export function presentedCredentials(authorization: string | undefined, form: URLSearchParams): PresentedCredentials {
  const postId = form.get('client_id') || undefined;
  const postSecret = form.get('client_secret') || undefined;
  if (authorization !== undefined) {
    const [scheme, token, ...rest] = authorization.trim().split(/\s+/);
    if (scheme?.toLowerCase() !== 'basic') return { method: 'invalid', reason: 'malformed', basic: false };
    if (!token || rest.length > 0) return { method: 'invalid', reason: 'malformed', basic: true };
    const basic = decodeBasic(token);
    if (!basic) return { method: 'invalid', reason: 'malformed', basic: true };
    // A client_id repeated in the body is tolerated when it names the same client; a secret there is a second method.
    if (postSecret || (postId && postId !== basic.clientId))
      return { method: 'invalid', reason: 'multiple', basic: true };
    return { method: 'client_secret_basic', ...basic };
  }
  if (postId && postSecret) return { method: 'client_secret_post', clientId: postId, clientSecret: postSecret };
  if (postId || postSecret) return { method: 'invalid', reason: 'incomplete', basic: false };
  return { method: 'none' };
}
