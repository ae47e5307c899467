-- MCP servers the operator added at run time (the admin API or the
-- command line), served by every instance beside the configuration
-- file's. spec is the server's settings as JSON (url, headers, command,
-- env, dir, timeout, prices). A change moves the key generation, so
-- running gateways pick it up within their key watch interval.
CREATE TABLE mcp_servers (
	name       TEXT PRIMARY KEY,
	spec       TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
) STRICT;

CREATE TRIGGER mcp_servers_inserted AFTER INSERT ON mcp_servers
BEGIN
	UPDATE key_generation SET gen = gen + 1 WHERE id = 1;
END;
CREATE TRIGGER mcp_servers_changed AFTER UPDATE ON mcp_servers
BEGIN
	UPDATE key_generation SET gen = gen + 1 WHERE id = 1;
END;
CREATE TRIGGER mcp_servers_deleted AFTER DELETE ON mcp_servers
BEGIN
	UPDATE key_generation SET gen = gen + 1 WHERE id = 1;
END;
