-- Accounts carry the denormalised money columns: balance = top_ups - charged,
-- kept in step with the ledger by every write that touches money.
CREATE TABLE accounts (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL UNIQUE,
	top_ups    INTEGER NOT NULL DEFAULT 0,
	charged    INTEGER NOT NULL DEFAULT 0,
	balance    INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE api_keys (
	id         TEXT PRIMARY KEY,
	account_id TEXT NOT NULL REFERENCES accounts (id),
	hash       BLOB NOT NULL,
	hint       TEXT NOT NULL,
	rpm        INTEGER NOT NULL DEFAULT 0,
	tpm        INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL,
	revoked_at INTEGER
) STRICT;
CREATE UNIQUE INDEX api_keys_hash ON api_keys (hash);
CREATE INDEX api_keys_created ON api_keys (created_at DESC, id DESC);

CREATE TABLE holds (
	id         TEXT PRIMARY KEY,
	account_id TEXT NOT NULL REFERENCES accounts (id),
	key_id     TEXT NOT NULL,
	amount     INTEGER NOT NULL CHECK (amount >= 0),
	expires_at INTEGER NOT NULL,
	created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX holds_account_expires ON holds (account_id, expires_at);
CREATE INDEX holds_expires ON holds (expires_at);

-- Ledger: top-ups positive, charges negative. Summing an account's entries
-- gives its balance column.
CREATE TABLE ledger (
	id         INTEGER PRIMARY KEY,
	account_id TEXT NOT NULL REFERENCES accounts (id),
	amount     INTEGER NOT NULL,
	request_id TEXT NOT NULL DEFAULT '',
	note       TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX ledger_account ON ledger (account_id, id);
-- A request is charged at most once.
CREATE UNIQUE INDEX ledger_request ON ledger (request_id) WHERE request_id <> '';

CREATE TABLE records (
	request_id            TEXT PRIMARY KEY,
	account_id            TEXT NOT NULL,
	key_id                TEXT NOT NULL,
	endpoint              TEXT NOT NULL,
	vendor                TEXT NOT NULL,
	model                 TEXT NOT NULL,
	stream                INTEGER NOT NULL,
	status                INTEGER NOT NULL,
	error_code            TEXT NOT NULL,
	input_tokens          INTEGER NOT NULL,
	cache_read_tokens     INTEGER NOT NULL,
	cache_write_5m_tokens INTEGER NOT NULL,
	cache_write_1h_tokens INTEGER NOT NULL,
	output_tokens         INTEGER NOT NULL,
	reasoning_tokens      INTEGER NOT NULL,
	optimizer_tokens      INTEGER NOT NULL,
	usage_reported        INTEGER NOT NULL,
	reported_cost         INTEGER NOT NULL,
	has_reported_cost     INTEGER NOT NULL,
	cost                  INTEGER NOT NULL,
	charge                INTEGER NOT NULL,
	latency_us            INTEGER NOT NULL,
	ttfb_us               INTEGER NOT NULL,
	guard                 TEXT NOT NULL,
	note                  TEXT NOT NULL,
	created_at            INTEGER NOT NULL
) STRICT;
CREATE INDEX records_account_created ON records (account_id, created_at, request_id);
CREATE INDEX records_created ON records (created_at, request_id);

CREATE TABLE incidents (
	id         TEXT PRIMARY KEY,
	request_id TEXT NOT NULL,
	account_id TEXT NOT NULL,
	key_id     TEXT NOT NULL,
	kind       TEXT NOT NULL,
	score      REAL NOT NULL,
	reason     TEXT NOT NULL,
	excerpt    TEXT NOT NULL,
	created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX incidents_created ON incidents (created_at, id);
