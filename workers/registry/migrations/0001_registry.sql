-- The platform registry: organizations, their trade platforms and their API clients.
CREATE TABLE organizations (
  id TEXT PRIMARY KEY,
  name TEXT,
  created TEXT NOT NULL
);

CREATE TABLE trade_platforms (
  id TEXT PRIMARY KEY,
  name TEXT,
  type TEXT NOT NULL CHECK (type IN ('PF4', 'PF5', 'PFOther')),
  organization_id TEXT NOT NULL REFERENCES organizations(id),
  -- Base URL of the broker that serves this platform; NULL means the edge's BROKER_URL.
  broker_url TEXT,
  created TEXT NOT NULL
);
CREATE INDEX trade_platforms_by_org ON trade_platforms (organization_id);

CREATE TABLE api_clients (
  client_id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id),
  name TEXT,
  -- PBKDF2-SHA256 of the secret with a per-client salt; the secret itself is never stored.
  secret_hash TEXT NOT NULL,
  secret_salt TEXT NOT NULL,
  iterations INTEGER NOT NULL,
  disabled INTEGER NOT NULL DEFAULT 0,
  created TEXT NOT NULL
);
CREATE INDEX api_clients_by_org ON api_clients (organization_id);
