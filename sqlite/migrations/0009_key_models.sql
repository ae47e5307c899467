-- A key's model allow list: comma-separated prefixed model ids or
-- patterns ending in "*"; empty: every model.
ALTER TABLE api_keys ADD COLUMN models TEXT NOT NULL DEFAULT '';
