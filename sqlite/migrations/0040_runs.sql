-- Runs: an agent's task as the caller names it (X-Gateway-Run), per
-- account. spend, held, requests and inflight include the run's
-- descendants; budget 0, max_requests 0 and idle_seconds 0 are no cap.
-- Money in micro-cents, times in Unix microseconds.
CREATE TABLE runs (
	account_id   TEXT NOT NULL,
	id           TEXT NOT NULL,
	parent_id    TEXT NOT NULL DEFAULT '',
	key_id       TEXT NOT NULL DEFAULT '',
	budget       INTEGER NOT NULL DEFAULT 0,
	max_requests INTEGER NOT NULL DEFAULT 0,
	idle_seconds INTEGER NOT NULL DEFAULT 0,
	spend        INTEGER NOT NULL DEFAULT 0,
	held         INTEGER NOT NULL DEFAULT 0,
	requests     INTEGER NOT NULL DEFAULT 0,
	inflight     INTEGER NOT NULL DEFAULT 0,
	errors       INTEGER NOT NULL DEFAULT 0,
	incidents    INTEGER NOT NULL DEFAULT 0,
	first_seen   INTEGER NOT NULL,
	last_seen    INTEGER NOT NULL,
	PRIMARY KEY (account_id, id)
) STRICT;
CREATE INDEX runs_by_spend ON runs (account_id, spend DESC);
CREATE INDEX runs_by_parent ON runs (account_id, parent_id);

-- A step in flight: its hold on the run and the run's ancestors.
CREATE TABLE run_holds (
	request_id TEXT PRIMARY KEY,
	account_id TEXT NOT NULL,
	run_id     TEXT NOT NULL,
	amount     INTEGER NOT NULL,
	expires_at INTEGER NOT NULL
) STRICT;
CREATE INDEX run_holds_by_run ON run_holds (account_id, run_id, expires_at);

-- A run's finished steps: its timeline.
CREATE TABLE run_steps (
	account_id   TEXT NOT NULL,
	run_id       TEXT NOT NULL,
	request_id   TEXT NOT NULL,
	endpoint     TEXT NOT NULL,
	vendor       TEXT NOT NULL,
	model        TEXT NOT NULL,
	status       INTEGER NOT NULL,
	error_code   TEXT NOT NULL,
	input_tokens INTEGER NOT NULL,
	cache_read   INTEGER NOT NULL,
	cache_write  INTEGER NOT NULL,
	output       INTEGER NOT NULL,
	reasoning    INTEGER NOT NULL,
	charge       INTEGER NOT NULL,
	latency_us   INTEGER NOT NULL,
	guard        TEXT NOT NULL,
	attempts     INTEGER NOT NULL,
	created_at   INTEGER NOT NULL,
	PRIMARY KEY (account_id, run_id, request_id)
) STRICT;

-- A key's run caps, for runs its requests start without caps.
CREATE TABLE run_defaults (
	key_id       TEXT PRIMARY KEY,
	budget       INTEGER NOT NULL DEFAULT 0,
	max_requests INTEGER NOT NULL DEFAULT 0,
	idle_seconds INTEGER NOT NULL DEFAULT 0
) STRICT;
