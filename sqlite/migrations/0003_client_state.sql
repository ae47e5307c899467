-- Client state the gateway keeps on mapped routes, only when a client's
-- protocol needs it: message threads (the conversation, kept only when the
-- client asks for a thread) and DeepSeek reasoning per tool call. Values
-- are opaque to the store; an entry past expires_at is never returned and
-- is deleted by the periodic sweep.
CREATE TABLE client_state (
	kind       TEXT NOT NULL,
	account_id TEXT NOT NULL,
	key        TEXT NOT NULL,
	value      BLOB NOT NULL,
	expires_at INTEGER NOT NULL,
	PRIMARY KEY (kind, account_id, key)
) STRICT;
CREATE INDEX client_state_expiry ON client_state (expires_at);
