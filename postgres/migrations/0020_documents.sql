-- Documents the gateway keeps between runs, by name: the last good copy
-- of OpenRouter's price list (its models endpoint's answer) and when it
-- was read, used at start until a fresh one arrives.
CREATE TABLE documents (
    name       text PRIMARY KEY,
    body       bytea NOT NULL,
    fetched_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
