-- Regions (docs/regions.md). home_region is a platform's home region: where the objects that take its live reads
-- and writes are created (one of the nine location hints); NULL means the edge's HOME_REGION. jurisdiction pins an
-- organization's objects to one of Cloudflare's jurisdictions (eu, fedramp, fedramp-high, us); NULL means none. An
-- edge of the previous version ignores both columns and keeps placing objects as before.
ALTER TABLE trade_platforms ADD COLUMN home_region TEXT;
ALTER TABLE organizations ADD COLUMN jurisdiction TEXT;
