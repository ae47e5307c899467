-- A budget period's spend is the sum of its records' charges: the
-- indexes by key and by account carry the charge, so that the sum can
-- read the index alone.
DROP INDEX records_key_created;
CREATE INDEX records_key_created ON records (key_id, created_at) INCLUDE (charge);
DROP INDEX records_account_created;
CREATE INDEX records_account_created ON records (account_id, created_at, request_id) INCLUDE (charge);
