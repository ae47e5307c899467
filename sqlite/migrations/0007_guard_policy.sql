-- Guard policy per key and per account, the flagged text of incidents,
-- their reviews, and each account's allow list of reviewed false
-- positives (normalised text hashes).
CREATE TABLE guard_policies (
	subject             TEXT NOT NULL CHECK (subject IN ('key', 'account')),
	id                  TEXT NOT NULL,
	mode                TEXT NOT NULL,
	scope               TEXT NOT NULL,
	user_threshold      REAL NOT NULL DEFAULT 0,
	tool_threshold      REAL NOT NULL DEFAULT 0,
	assistant_threshold REAL NOT NULL DEFAULT 0,
	updated_at          INTEGER NOT NULL,
	PRIMARY KEY (subject, id)
) STRICT;

CREATE TABLE incident_texts (
	incident_id TEXT PRIMARY KEY,
	account_id  TEXT NOT NULL,
	hash        BLOB NOT NULL,
	text        TEXT NOT NULL
) STRICT;

CREATE TABLE incident_reviews (
	incident_id TEXT PRIMARY KEY,
	verdict     TEXT NOT NULL CHECK (verdict IN ('false-positive', 'confirmed')),
	note        TEXT NOT NULL,
	reviewed_at INTEGER NOT NULL
) STRICT;
CREATE INDEX incident_reviews_reviewed ON incident_reviews (reviewed_at, incident_id);

CREATE TABLE guard_allow (
	account_id  TEXT NOT NULL,
	hash        BLOB NOT NULL,
	incident_id TEXT NOT NULL,
	created_at  INTEGER NOT NULL,
	PRIMARY KEY (account_id, hash)
) STRICT;
