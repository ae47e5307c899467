-- Per-key switch of the optimization layer (gateway keys create --optimize off).
ALTER TABLE api_keys ADD COLUMN optimize_off INTEGER NOT NULL DEFAULT 0;
