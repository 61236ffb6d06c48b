-- An API client's allowed networks (docs/api.md, "Allowed networks"): space-separated networks in canonical CIDR
-- notation (`203.0.113.0/24 2001:db8::/32`) its token requests and calls must come from; '' means any source, which
-- every client registered before this migration keeps. An edge of the previous version ignores the column.
ALTER TABLE api_clients ADD COLUMN allowed_networks TEXT NOT NULL DEFAULT '';
