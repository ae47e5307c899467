-- The account keeps the running total of its open holds (expired or not,
-- until swept), updated in the same transaction as every hold placed,
-- settled, released or expired, so that checking a new hold reads one row
-- instead of summing every open hold of the account.
ALTER TABLE accounts ADD COLUMN held INTEGER NOT NULL DEFAULT 0 CHECK (held >= 0);
UPDATE accounts SET held = (SELECT coalesce(sum(amount), 0) FROM holds WHERE holds.account_id = accounts.id);
