/** The interactive API reference at /docs. */
export { docsRoutes, DOCS_PATH } from './docs.js';
