-- The admin API: key names, top-up references (unique per account, so a
-- retried top-up is not counted twice), and per-key usage lookups.
ALTER TABLE api_keys ADD COLUMN name TEXT NOT NULL DEFAULT '';
ALTER TABLE ledger ADD COLUMN reference TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX ledger_reference ON ledger (account_id, reference) WHERE reference <> '';
CREATE INDEX records_key_created ON records (key_id, created_at);
