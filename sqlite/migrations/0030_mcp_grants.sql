-- MCP allow lists per key and per account: the servers and tools a
-- subject may list and call through /mcp, and its tool calls per
-- minute. allow is the entries joined by newlines ('' grants nothing).
CREATE TABLE mcp_grants (
	subject    TEXT NOT NULL CHECK (subject IN ('key', 'account')),
	id         TEXT NOT NULL,
	allow      TEXT NOT NULL,
	tool_rpm   INTEGER NOT NULL DEFAULT 0,
	updated_at INTEGER NOT NULL,
	PRIMARY KEY (subject, id)
) STRICT;

CREATE TRIGGER mcp_grants_inserted AFTER INSERT ON mcp_grants
BEGIN
	UPDATE key_generation SET gen = gen + 1 WHERE id = 1;
END;
CREATE TRIGGER mcp_grants_changed AFTER UPDATE ON mcp_grants
BEGIN
	UPDATE key_generation SET gen = gen + 1 WHERE id = 1;
END;
CREATE TRIGGER mcp_grants_deleted AFTER DELETE ON mcp_grants
BEGIN
	UPDATE key_generation SET gen = gen + 1 WHERE id = 1;
END;
