-- Idempotency-Key for the edge's own changes under /api/v2/ (the webhook endpoints), which no broker runs
-- (workers/registry/localKeys.ts): a key's binding to its request, written before the change is made, and the answer
-- the change got, replayed to every repeat until expires_ms.
CREATE TABLE local_idempotency (
  client_id TEXT NOT NULL,
  key TEXT NOT NULL,
  -- SHA-256 of the canonical request (workers/api/idempotency.ts requestHash).
  fingerprint TEXT NOT NULL,
  -- NULL while the change is being made; the answer's status, content type and body once it is.
  status INTEGER,
  -- 1 when the change failed in the edge itself and may have been made: its outcome cannot be known.
  unknown INTEGER NOT NULL DEFAULT 0,
  content_type TEXT,
  body TEXT,
  created_ms INTEGER NOT NULL,
  expires_ms INTEGER NOT NULL,
  PRIMARY KEY (client_id, key)
) WITHOUT ROWID;
CREATE INDEX local_idempotency_by_expiry ON local_idempotency (expires_ms);
