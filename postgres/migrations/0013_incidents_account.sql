-- An account's incidents, newest first, without scanning every
-- account's (one account's flood must not hide another's).
CREATE INDEX incidents_account_created ON incidents (account_id, created_at, id);
