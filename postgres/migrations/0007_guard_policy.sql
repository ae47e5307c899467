-- Guard policy per key and per account, the flagged text of incidents,
-- their reviews, and each account's allow list of reviewed false
-- positives (normalised text hashes).
CREATE TABLE guard_policies (
	subject             text NOT NULL CHECK (subject IN ('key', 'account')),
	id                  text NOT NULL,
	mode                text NOT NULL,
	scope               text NOT NULL,
	user_threshold      double precision NOT NULL DEFAULT 0,
	tool_threshold      double precision NOT NULL DEFAULT 0,
	assistant_threshold double precision NOT NULL DEFAULT 0,
	updated_at          timestamptz NOT NULL,
	PRIMARY KEY (subject, id)
);

CREATE TABLE incident_texts (
	incident_id text PRIMARY KEY,
	account_id  text NOT NULL,
	hash        bytea NOT NULL,
	text        text NOT NULL
);

CREATE TABLE incident_reviews (
	incident_id text PRIMARY KEY,
	verdict     text NOT NULL CHECK (verdict IN ('false-positive', 'confirmed')),
	note        text NOT NULL,
	reviewed_at timestamptz NOT NULL
);
CREATE INDEX incident_reviews_reviewed ON incident_reviews (reviewed_at, incident_id);

CREATE TABLE guard_allow (
	account_id  text NOT NULL,
	hash        bytea NOT NULL,
	incident_id text NOT NULL,
	created_at  timestamptz NOT NULL,
	PRIMARY KEY (account_id, hash)
);
