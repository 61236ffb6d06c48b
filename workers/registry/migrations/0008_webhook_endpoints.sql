-- An organization's webhook endpoints (docs/webhooks.md): where the events of its platforms are delivered, signed
-- with the endpoint's secret. The secret is kept because signing needs it; no answer carries it after creation. A
-- rotated secret stays valid until previous_secret_until, and deliveries meanwhile carry both signatures.
CREATE TABLE webhook_endpoints (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id),
  url TEXT NOT NULL,
  description TEXT,
  -- Space-separated event types (workers/webhooks/webhookEvents.ts WEBHOOK_EVENT_TYPES).
  event_types TEXT NOT NULL,
  -- Space-separated platform uuids of the organization; NULL: every platform of the organization.
  platforms TEXT,
  -- NULL while enabled; why it was disabled otherwise (by a caller, a 410 Gone, failing for too long).
  disabled_reason TEXT,
  secret TEXT NOT NULL,
  previous_secret TEXT,
  previous_secret_until TEXT,
  created TEXT NOT NULL,
  updated TEXT NOT NULL
);
CREATE INDEX webhook_endpoints_by_org ON webhook_endpoints (organization_id);
