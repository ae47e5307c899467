-- The account keeps the running total of its open holds (expired or not,
-- until swept), updated in the same transaction as every hold placed,
-- settled, released or expired, so that checking a new hold reads one row
-- instead of summing every open hold of the account.
ALTER TABLE accounts ADD COLUMN held bigint NOT NULL DEFAULT 0 CHECK (held >= 0);
UPDATE accounts SET held = h.s
	FROM (SELECT account_id, sum(amount)::bigint AS s FROM holds GROUP BY account_id) h
	WHERE accounts.id = h.account_id;
