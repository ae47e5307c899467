-- MCP servers the operator added at run time (the admin API or the
-- command line), served by every instance beside the configuration
-- file's. spec is the server's settings as JSON (url, headers, command,
-- env, dir, timeout, prices). A change moves the key generation, so
-- running gateways pick it up within their key watch interval.
CREATE TABLE mcp_servers (
	name       TEXT PRIMARY KEY,
	spec       TEXT NOT NULL,
	created_at TIMESTAMPTZ NOT NULL,
	updated_at TIMESTAMPTZ NOT NULL
);

CREATE TRIGGER mcp_servers_changed AFTER INSERT OR UPDATE OR DELETE ON mcp_servers
	FOR EACH STATEMENT EXECUTE FUNCTION bump_key_generation();
