-- Per-key switch of the optimization layer (gateway keys create --optimize off).
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS optimize_off boolean NOT NULL DEFAULT false;
