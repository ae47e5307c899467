-- Runs: an agent's task as the caller names it (X-Gateway-Run), per
-- account. spend, held, requests and inflight include the run's
-- descendants; budget 0, max_requests 0 and idle_seconds 0 are no cap.
-- Money in micro-cents, times as timestamptz.
CREATE TABLE runs (
	account_id   TEXT NOT NULL,
	id           TEXT NOT NULL,
	parent_id    TEXT NOT NULL DEFAULT '',
	key_id       TEXT NOT NULL DEFAULT '',
	budget       BIGINT NOT NULL DEFAULT 0,
	max_requests BIGINT NOT NULL DEFAULT 0,
	idle_seconds BIGINT NOT NULL DEFAULT 0,
	spend        BIGINT NOT NULL DEFAULT 0,
	held         BIGINT NOT NULL DEFAULT 0,
	requests     BIGINT NOT NULL DEFAULT 0,
	inflight     BIGINT NOT NULL DEFAULT 0,
	errors       BIGINT NOT NULL DEFAULT 0,
	incidents    BIGINT NOT NULL DEFAULT 0,
	first_seen   TIMESTAMPTZ NOT NULL,
	last_seen    TIMESTAMPTZ NOT NULL,
	PRIMARY KEY (account_id, id)
);
CREATE INDEX runs_by_spend ON runs (account_id, spend DESC);
CREATE INDEX runs_by_parent ON runs (account_id, parent_id);

-- A step in flight: its hold on the run and the run's ancestors.
CREATE TABLE run_holds (
	request_id TEXT PRIMARY KEY,
	account_id TEXT NOT NULL,
	run_id     TEXT NOT NULL,
	amount     BIGINT NOT NULL,
	expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX run_holds_by_run ON run_holds (account_id, run_id, expires_at);

-- A run's finished steps: its timeline.
CREATE TABLE run_steps (
	account_id   TEXT NOT NULL,
	run_id       TEXT NOT NULL,
	request_id   TEXT NOT NULL,
	endpoint     TEXT NOT NULL,
	vendor       TEXT NOT NULL,
	model        TEXT NOT NULL,
	status       BIGINT NOT NULL,
	error_code   TEXT NOT NULL,
	input_tokens BIGINT NOT NULL,
	cache_read   BIGINT NOT NULL,
	cache_write  BIGINT NOT NULL,
	output       BIGINT NOT NULL,
	reasoning    BIGINT NOT NULL,
	charge       BIGINT NOT NULL,
	latency_us   BIGINT NOT NULL,
	guard        TEXT NOT NULL,
	attempts     BIGINT NOT NULL,
	created_at   TIMESTAMPTZ NOT NULL,
	PRIMARY KEY (account_id, run_id, request_id)
);

-- A key's run caps, for runs its requests start without caps.
CREATE TABLE run_defaults (
	key_id       TEXT PRIMARY KEY,
	budget       BIGINT NOT NULL DEFAULT 0,
	max_requests BIGINT NOT NULL DEFAULT 0,
	idle_seconds BIGINT NOT NULL DEFAULT 0
);
