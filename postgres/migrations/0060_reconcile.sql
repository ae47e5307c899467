-- Reconciliation (package reconcile): the ledger checked against each
-- vendor's report. Money in micro-cents, days and times as
-- timestamptz.

-- A job that runs on one instance only holds its lease here.
CREATE TABLE job_leases (
	name       TEXT PRIMARY KEY,
	holder     TEXT NOT NULL,
	expires_at TIMESTAMPTZ NOT NULL
);

-- One compared figure of a vendor-day; a run replaces its vendor-day's
-- lines.
CREATE TABLE recon_lines (
	vendor        TEXT NOT NULL,
	day           TIMESTAMPTZ NOT NULL,
	level         TEXT NOT NULL,
	model         TEXT NOT NULL,
	vendor_key    TEXT NOT NULL,
	class         TEXT NOT NULL,
	ledger        BIGINT NOT NULL,
	reported      BIGINT NOT NULL,
	drift_ppm     BIGINT NOT NULL,
	status        TEXT NOT NULL,
	alert         TEXT NOT NULL,
	our_price     BIGINT NOT NULL,
	implied_price BIGINT NOT NULL,
	final         BOOLEAN NOT NULL,
	checked_at    TIMESTAMPTZ NOT NULL,
	note          TEXT NOT NULL,
	PRIMARY KEY (vendor, day, level, model, vendor_key, class)
);
CREATE INDEX recon_lines_by_day ON recon_lines (day, vendor);

-- Readings of a prepaid vendor balance (DeepSeek).
CREATE TABLE balance_readings (
	vendor  TEXT NOT NULL,
	at      TIMESTAMPTZ NOT NULL,
	balance BIGINT NOT NULL,
	PRIMARY KEY (vendor, at)
);

-- Requests whose vendor's own generation cost was checked (OpenRouter):
-- status matched, or an adjustment for the operator to review.
CREATE TABLE adjustments (
	request_id    TEXT PRIMARY KEY,
	account_id    TEXT NOT NULL,
	vendor        TEXT NOT NULL,
	model         TEXT NOT NULL,
	generation_id TEXT NOT NULL,
	ledger        BIGINT NOT NULL,
	reported      BIGINT NOT NULL,
	charge        BIGINT NOT NULL,
	status        TEXT NOT NULL,
	created_at    TIMESTAMPTZ NOT NULL,
	decided_at    TIMESTAMPTZ,
	decided_by    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX adjustments_by_status ON adjustments (status, created_at);

-- The vendor's id of its response (OpenRouter's generation id).
ALTER TABLE records ADD COLUMN vendor_response_id TEXT NOT NULL DEFAULT '';
CREATE INDEX records_vendor_created ON records (vendor, created_at);
