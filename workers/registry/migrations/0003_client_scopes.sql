-- The OAuth scopes a client may hold (space-separated names of SCOPES in shared/catalog/operation.ts: webapi,
-- webapi.write, webapi.admin). A client inserted without them holds webapi alone (read only). Clients registered
-- before scopes existed could call every operation; they keep that until an operator narrows them with
-- `npm run registry -- client scopes CLIENT_ID ...`, so upgrading breaks no caller.
ALTER TABLE api_clients ADD COLUMN scopes TEXT NOT NULL DEFAULT 'webapi';
UPDATE api_clients SET scopes = 'webapi webapi.write webapi.admin';
