// The MCP cells of the client-conformance suite: Claude Code, Codex CLI
// and Gemini CLI, each with its own MCP settings naming the gateway's
// /mcp (the key in the Authorization header), list the gateway's tools
// and call one of an upstream server's while they chat through the
// gateway against the fake vendors (the prompt's [fake:call=*SUFFIX]
// makes the fake model call the tool whatever prefix the client gave
// it). run.mjs adds these cells when CONFORMANCE_MCP is set;
// mcp_test.go sets it, with the gateway in front of the reference
// server-everything over streamable HTTP ("everything") and over stdio
// ("local").
export function mcpChecks({ runClaude, runCodex, runGemini, must, baseURL, apiKey }) {
  const url = `${baseURL}/mcp`;
  const echo = (server, marker) => `Echo it. [fake:call=*${server}__echo:${JSON.stringify({ message: marker })}]`;
  const echoed = (text, marker) => must(String(text ?? '').includes(`Echo: ${marker}`), `answer ${JSON.stringify(String(text ?? '').slice(0, 300))}, want the tool's echo of ${marker}`);

  // Claude Code: --mcp-config with an HTTP server and its headers; its
  // MCP tools are mcp__SERVER__TOOL, here mcp__gateway__local__echo.
  const claude = async (model, server) => {
    const marker = `mcp-marker-${server}-5`;
    const config = { mcpServers: { gateway: { type: 'http', url, headers: { Authorization: `Bearer ${apiKey}` } } } };
    // Claude Code connects MCP servers in the background unless told to
    // wait: the first turn must already offer the gateway's tools.
    const out = await runClaude(model, echo(server, marker), `mcp__gateway__${server}__echo`, {
      args: ['--mcp-config', JSON.stringify(config), '--strict-mcp-config'],
      // It also defers MCP tools behind its tool search when there are
      // many; the fake model cannot search, so every tool is offered.
      env: { MCP_CONNECTION_NONBLOCKING: 'false', ENABLE_TOOL_SEARCH: 'false' },
    });
    must(out.num_turns >= 2, `${out.num_turns} turns, want a tool round trip`);
    echoed(out.result, marker);
  };

  return [
    { client: 'claude mcp stdio', endpoint: 'M', lane: 'claude', fn: (model) => claude(model, 'local') },
    { client: 'claude mcp http', endpoint: 'M', lane: 'claude', fn: (model) => claude(model, 'everything') },
    // Codex CLI: [mcp_servers.NAME] with url and bearer_token_env_var.
    {
      client: 'codex mcp',
      endpoint: 'R',
      fn: async (model) => {
        const marker = 'mcp-marker-codex-7';
        const { message, output } = await runCodex(model, echo('everything', marker), null, {
          catalog: false,
          config: ['[mcp_servers.gateway]', `url = ${JSON.stringify(url)}`, 'bearer_token_env_var = "GATEWAY_API_KEY"', 'startup_timeout_sec = 60'],
        });
        must(String(message).includes(`Echo: ${marker}`), `answer ${JSON.stringify(message.slice(0, 200))}, want the tool's echo of ${marker}; codex said ${JSON.stringify(output.slice(-600))}`);
      },
    },
    // Gemini CLI: mcpServers in settings.json, httpUrl with headers,
    // trusted (no confirmation under --approval-mode yolo anyway).
    {
      client: 'gemini mcp',
      endpoint: 'G',
      fn: async (model) => {
        const marker = 'mcp-marker-gemini-9';
        const { out } = await runGemini(model, echo('everything', marker), null, {
          mcpServers: { gateway: { httpUrl: url, headers: { Authorization: `Bearer ${apiKey}` }, trust: true } },
        });
        must(out.stats?.tools?.totalCalls >= 1, `tool calls ${JSON.stringify(out.stats?.tools)}`);
        echoed(out.response, marker);
      },
    },
  ];
}
