-- Per-account reads that must not scan every account's rows: an
-- account's incidents, newest first (one account's flood must not hide
-- another's), and what client state an account keeps (its bounds).
CREATE INDEX incidents_account_created ON incidents (account_id, created_at, id);
CREATE INDEX client_state_account ON client_state (account_id, expires_at);
