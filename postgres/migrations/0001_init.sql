-- Accounts carry the denormalised money columns: balance = top_ups - charged,
-- kept in step with the ledger by every write that touches money. The row is
-- also the lock that serialises an account's holds.
CREATE TABLE accounts (
	id         text PRIMARY KEY,
	name       text NOT NULL UNIQUE,
	top_ups    bigint NOT NULL DEFAULT 0,
	charged    bigint NOT NULL DEFAULT 0,
	balance    bigint NOT NULL DEFAULT 0,
	created_at timestamptz NOT NULL
);

CREATE TABLE api_keys (
	id         text PRIMARY KEY,
	account_id text NOT NULL REFERENCES accounts (id),
	hash       bytea NOT NULL,
	hint       text NOT NULL,
	rpm        bigint NOT NULL DEFAULT 0,
	tpm        bigint NOT NULL DEFAULT 0,
	created_at timestamptz NOT NULL,
	revoked_at timestamptz
);
CREATE UNIQUE INDEX api_keys_hash ON api_keys (hash);
CREATE INDEX api_keys_created ON api_keys (created_at DESC, id DESC);

CREATE TABLE holds (
	id         text PRIMARY KEY,
	account_id text NOT NULL REFERENCES accounts (id),
	key_id     text NOT NULL,
	amount     bigint NOT NULL CHECK (amount >= 0),
	expires_at timestamptz NOT NULL,
	created_at timestamptz NOT NULL
);
CREATE INDEX holds_account_expires ON holds (account_id, expires_at);
CREATE INDEX holds_expires ON holds (expires_at);

-- Ledger: top-ups positive, charges negative. Summing an account's entries
-- gives its balance column.
CREATE TABLE ledger (
	id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	account_id text NOT NULL REFERENCES accounts (id),
	amount     bigint NOT NULL,
	request_id text NOT NULL DEFAULT '',
	note       text NOT NULL DEFAULT '',
	created_at timestamptz NOT NULL
);
CREATE INDEX ledger_account ON ledger (account_id, id);
-- A request is charged at most once.
CREATE UNIQUE INDEX ledger_request ON ledger (request_id) WHERE request_id <> '';

CREATE TABLE records (
	request_id            text PRIMARY KEY,
	account_id            text NOT NULL,
	key_id                text NOT NULL,
	endpoint              text NOT NULL,
	vendor                text NOT NULL,
	model                 text NOT NULL,
	stream                boolean NOT NULL,
	status                integer NOT NULL,
	error_code            text NOT NULL,
	input_tokens          bigint NOT NULL,
	cache_read_tokens     bigint NOT NULL,
	cache_write_5m_tokens bigint NOT NULL,
	cache_write_1h_tokens bigint NOT NULL,
	output_tokens         bigint NOT NULL,
	reasoning_tokens      bigint NOT NULL,
	optimizer_tokens      bigint NOT NULL,
	usage_reported        boolean NOT NULL,
	reported_cost         bigint NOT NULL,
	has_reported_cost     boolean NOT NULL,
	cost                  bigint NOT NULL,
	charge                bigint NOT NULL,
	latency_us            bigint NOT NULL,
	ttfb_us               bigint NOT NULL,
	guard                 text NOT NULL,
	note                  text NOT NULL,
	created_at            timestamptz NOT NULL
);
CREATE INDEX records_account_created ON records (account_id, created_at, request_id);
CREATE INDEX records_created ON records (created_at, request_id);

CREATE TABLE incidents (
	id         text PRIMARY KEY,
	request_id text NOT NULL,
	account_id text NOT NULL,
	key_id     text NOT NULL,
	kind       text NOT NULL,
	score      double precision NOT NULL,
	reason     text NOT NULL,
	excerpt    text NOT NULL,
	created_at timestamptz NOT NULL
);
CREATE INDEX incidents_created ON incidents (created_at, id);
