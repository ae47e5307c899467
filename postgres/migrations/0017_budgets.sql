-- Spend caps in micro-cents per UTC calendar day and month (0: none), of
-- a key and of an account.
ALTER TABLE api_keys ADD COLUMN daily_budget BIGINT NOT NULL DEFAULT 0;
ALTER TABLE api_keys ADD COLUMN monthly_budget BIGINT NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN daily_budget BIGINT NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN monthly_budget BIGINT NOT NULL DEFAULT 0;
-- A hold keeps the caps it was placed under, for its settle's bound (a
-- hold's created_at is its request's arrival, which places it in a day
-- and a month).
ALTER TABLE holds ADD COLUMN key_daily_budget BIGINT NOT NULL DEFAULT 0;
ALTER TABLE holds ADD COLUMN key_monthly_budget BIGINT NOT NULL DEFAULT 0;
ALTER TABLE holds ADD COLUMN account_daily_budget BIGINT NOT NULL DEFAULT 0;
ALTER TABLE holds ADD COLUMN account_monthly_budget BIGINT NOT NULL DEFAULT 0;
