-- Which OAuth2 grant types a client may use (space-separated). Every client today uses client_credentials; a client
-- registered without it is known but not allowed to obtain tokens, answered as RFC 6749 unauthorized_client.
ALTER TABLE api_clients ADD COLUMN grant_types TEXT NOT NULL DEFAULT 'client_credentials';
