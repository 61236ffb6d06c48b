/** Edge authentication: the local OAuth2 issuer (token endpoint, discovery, JWKS) and the Bearer token middleware. */
export { authRoutes, TOKEN_PATH, DISCOVERY_PATH, JWKS_PATH } from './authRoutes.js';
export { requireToken } from './requireToken.js';
export { authConfig, SCOPE, REALM, type AuthConfig } from './authConfig.js';
export { bearerError, tokenError } from './oauthError.js';
