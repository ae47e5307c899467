-- Documents the gateway keeps between runs, by name: the last good copy
-- of OpenRouter's price list (its models endpoint's answer) and when it
-- was read, used at start until a fresh one arrives.
CREATE TABLE documents (
    name       TEXT PRIMARY KEY,
    body       BLOB NOT NULL,
    fetched_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;
