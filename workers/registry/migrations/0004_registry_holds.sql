-- Setup steps holding the registry: while any row is here the edge answers every route but /livez 503
-- RegistryNotReady (workers/registry/readiness.ts). `npm start` holds it while it migrates and seeds the demo
-- registry (launcher/edge.ts) and deletes its row when done; a deployment leaves the table empty. The launcher may
-- create the table before this migration runs, hence IF NOT EXISTS.
CREATE TABLE IF NOT EXISTS registry_holds (
  name TEXT PRIMARY KEY,
  since TEXT NOT NULL
);
