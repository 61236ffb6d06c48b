/** The platform registry: D1 store, the registry HTTP routes and the per-caller platform lookup. */
export * from './records.js';
export * from './ids.js';
export * from './registryStore.js';
export * from './registryRoutes.js';
