-- Brokers in pairs: a platform is served by an ordered list of brokers, the first healthy one taking its calls and
-- the others standing by (shared/brokerUrls.ts). broker_urls holds the list as JSON array text of base URLs; NULL
-- means the edge's default list (BROKER_URL). Filled here from broker_url for platforms that name their broker.
-- broker_url stays, written with the list's first entry (NULL with the default list), so an edge of the previous
-- version keeps routing to the primary broker while a deploy replaces it; a row that has broker_url alone (written
-- by a previous version) is read as that one broker. Drop it in a later migration once no such edge or CLI runs.
ALTER TABLE trade_platforms ADD COLUMN broker_urls TEXT;
UPDATE trade_platforms SET broker_urls = json_array(broker_url) WHERE broker_url IS NOT NULL;
