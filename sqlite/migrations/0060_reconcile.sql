-- Reconciliation (package reconcile): the ledger checked against each
-- vendor's report. Money in micro-cents, days and times in Unix
-- microseconds.

-- A job that runs on one instance only holds its lease here.
CREATE TABLE job_leases (
	name       TEXT PRIMARY KEY,
	holder     TEXT NOT NULL,
	expires_at INTEGER NOT NULL
) STRICT;

-- One compared figure of a vendor-day; a run replaces its vendor-day's
-- lines.
CREATE TABLE recon_lines (
	vendor        TEXT NOT NULL,
	day           INTEGER NOT NULL,
	level         TEXT NOT NULL,
	model         TEXT NOT NULL,
	vendor_key    TEXT NOT NULL,
	class         TEXT NOT NULL,
	ledger        INTEGER NOT NULL,
	reported      INTEGER NOT NULL,
	drift_ppm     INTEGER NOT NULL,
	status        TEXT NOT NULL,
	alert         TEXT NOT NULL,
	our_price     INTEGER NOT NULL,
	implied_price INTEGER NOT NULL,
	final         INTEGER NOT NULL,
	checked_at    INTEGER NOT NULL,
	note          TEXT NOT NULL,
	PRIMARY KEY (vendor, day, level, model, vendor_key, class)
) STRICT;
CREATE INDEX recon_lines_by_day ON recon_lines (day, vendor);

-- Readings of a prepaid vendor balance (DeepSeek).
CREATE TABLE balance_readings (
	vendor  TEXT NOT NULL,
	at      INTEGER NOT NULL,
	balance INTEGER NOT NULL,
	PRIMARY KEY (vendor, at)
) STRICT;

-- Requests whose vendor's own generation cost was checked (OpenRouter):
-- status matched, or an adjustment for the operator to review.
CREATE TABLE adjustments (
	request_id    TEXT PRIMARY KEY,
	account_id    TEXT NOT NULL,
	vendor        TEXT NOT NULL,
	model         TEXT NOT NULL,
	generation_id TEXT NOT NULL,
	ledger        INTEGER NOT NULL,
	reported      INTEGER NOT NULL,
	charge        INTEGER NOT NULL,
	status        TEXT NOT NULL,
	created_at    INTEGER NOT NULL,
	decided_at    INTEGER,
	decided_by    TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX adjustments_by_status ON adjustments (status, created_at);

-- The vendor's id of its response (OpenRouter's generation id).
ALTER TABLE records ADD COLUMN vendor_response_id TEXT NOT NULL DEFAULT '';
CREATE INDEX records_vendor_created ON records (vendor, created_at);
