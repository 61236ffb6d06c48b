-- The audit rows of changes made with the registry CLI (`npm run registry`, docs/audit.md "Changes made by the
-- operator"). The CLI writes a row before its change (outcome unknown) and completes it after, in the registry the
-- change is made in; the edge copies each completed row into its organization's audit trail (forwarded_at) and keeps
-- the rows, the operator's own record, for AUDIT_RETENTION_DAYS. A row whose target belongs to no organization (an
-- unknown id) stays here only.
CREATE TABLE operator_audit (
  uid TEXT PRIMARY KEY,
  at TEXT NOT NULL,
  at_ms INTEGER NOT NULL,
  -- Who ran the command: the operating-system user and host, as the CLI saw them.
  operator TEXT NOT NULL,
  -- `cli.<noun>.<verb>`, for example cli.client.add.
  operation TEXT NOT NULL,
  organization_id TEXT,
  -- The organization's jurisdiction when the change was made: where its trail is if it has been removed since.
  jurisdiction TEXT,
  platform TEXT,
  trace_id TEXT NOT NULL,
  outcome TEXT NOT NULL,
  code TEXT,
  -- The command's arguments as JSON, secrets redacted (workers/audit/auditRecord.ts).
  args TEXT NOT NULL,
  completed_at TEXT,
  forwarded_at TEXT
);
CREATE INDEX operator_audit_by_time ON operator_audit (at_ms);
CREATE INDEX operator_audit_to_forward ON operator_audit (organization_id, at_ms) WHERE forwarded_at IS NULL;
CREATE INDEX operator_audit_waiting ON operator_audit (at_ms) WHERE forwarded_at IS NULL;
