-- MCP allow lists per key and per account: the servers and tools a
-- subject may list and call through /mcp, and its tool calls per
-- minute. allow is the entries joined by newlines ('' grants nothing).
CREATE TABLE mcp_grants (
	subject    TEXT NOT NULL CHECK (subject IN ('key', 'account')),
	id         TEXT NOT NULL,
	allow      TEXT NOT NULL,
	tool_rpm   BIGINT NOT NULL DEFAULT 0,
	updated_at TIMESTAMPTZ NOT NULL,
	PRIMARY KEY (subject, id)
);

CREATE TRIGGER mcp_grants_changed AFTER INSERT OR UPDATE OR DELETE ON mcp_grants
	FOR EACH STATEMENT EXECUTE FUNCTION bump_key_generation();
