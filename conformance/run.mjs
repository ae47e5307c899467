// The client-conformance suite: the current official clients, unchanged,
// against a running gateway whose vendors are the in-project fakes.
//
//   GATEWAY_URL=http://127.0.0.1:8080 GATEWAY_KEY=gwk_... node run.mjs
//
// conformance_test.go starts the gateway and runs this; run it by hand
// against "gateway serve --fake-vendors". Every check is one cell of a
// matrix (client x route, a route being endpoint x vendor); the last line
// is "N passed, M failed". Cells listed in expected-failures.txt are
// reported as "xfail" (with the reason from that file) and do not fail the
// run; a listed cell that passes is reported as "xpass" and does. The exit
// status is 0 only when every other cell passed.
//
// Cells run concurrently (CONFORMANCE_JOBS at a time, default 4); the
// Claude Code cells, which share a home directory, run one at a time.
// CONFORMANCE_VENDORS and CONFORMANCE_CLIENTS (comma-separated) select a
// subset of columns and rows.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { betaTool } from '@anthropic-ai/sdk/helpers/beta/json-schema';
import { Agent, OpenAIResponsesModel, run as runAgent, setTracingDisabled, tool as agentTool } from '@openai/agents';
import { embed as aiEmbed, embedMany as aiEmbedMany, generateText, stepCountIs, streamText, tool as aiTool } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { z } from 'zod';
import { GoogleGenAI, Type as GType } from '@google/genai';
import { mcpChecks } from './mcp.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

const baseURL = process.env.GATEWAY_URL;
const apiKey = process.env.GATEWAY_KEY;
if (!baseURL || !apiKey) {
  console.error('run.mjs: set GATEWAY_URL and GATEWAY_KEY');
  process.exit(2);
}

// One priced model per vendor prefix (the gateway's rate card and the
// fakes know them).
const models = {
  openai: 'openai/gpt-6-sol',
  anthropic: 'anthropic/claude-sonnet-5-5',
  google: 'google/gemini-3-flash',
  together: 'together/meta-llama/Llama-3.3-70B-Instruct-Turbo',
  fireworks: 'fireworks/accounts/fireworks/models/kimi-k2p6',
  groq: 'groq/llama-3.3-70b-versatile',
  mistral: 'mistral/mistral-large-latest',
  deepseek: 'deepseek/deepseek-flash',
  openrouter: 'openrouter/meta-llama/llama-3.3-70b-instruct',
};
// CONFORMANCE_ROUTE names an operator route ("gw/..."): one more column,
// "route", whose cells call it (conformance_test.go's route test).
if (process.env.CONFORMANCE_ROUTE) models.route = process.env.CONFORMANCE_ROUTE;
// CONFORMANCE_MODELS adds columns, "column=model" comma-separated (the
// Claude Code test's real Claude model ids: Claude Code sends other tool
// texts for a model it knows).
for (const kv of (process.env.CONFORMANCE_MODELS || '').split(',').filter(Boolean)) {
  const [column, model] = kv.split('=');
  models[column] = model;
}
const only = (process.env.CONFORMANCE_VENDORS || '').split(',').filter(Boolean);
const vendors = Object.keys(models).filter((v) => only.length === 0 || only.includes(v));
const onlyClients = (process.env.CONFORMANCE_CLIENTS || '').split(',').filter(Boolean);
const jobs = Math.max(1, Number(process.env.CONFORMANCE_JOBS) || 4);

// expected-failures.txt: "client vendor reason..." per line, # comments.
const expected = new Map();
for (const line of fs.readFileSync(path.join(here, 'expected-failures.txt'), 'utf8').split('\n')) {
  const t = line.trim();
  if (!t || t.startsWith('#')) continue;
  const [client, vendor, ...reason] = t.split(/\s+/);
  expected.set(`${client} ${vendor}`, reason.join(' '));
}

const openai = new OpenAI({ baseURL: `${baseURL}/v1`, apiKey, maxRetries: 0, timeout: 30_000 });
const anthropic = new Anthropic({ baseURL, apiKey, maxRetries: 0, timeout: 30_000 });

const weatherSchema = {
  type: 'object',
  properties: { city: { type: 'string', description: 'The city' } },
  required: ['city'],
};

// weatherToolLoop runs openai-node's tool loop with the get_weather tool,
// streamed or not, and checks the answer the tool's result led to.
async function weatherToolLoop(model, stream) {
  const runner = openai.chat.completions.runTools({
    model,
    ...(stream ? { stream: true } : {}),
    messages: [{ role: 'user', content: 'What is the weather? [fake:tool]' }],
    tools: [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather in a city',
          parameters: weatherSchema,
          parse: JSON.parse,
          function: (args) => `sunny-in-${args.city}`,
        },
      },
    ],
  });
  const content = await runner.finalContent();
  must(content === 'Tool said: sunny-in-x', `final content ${JSON.stringify(content)}`);
}

function must(cond, what) {
  if (!cond) throw new Error(what);
}

// Each check returns nothing or throws; the message is the cell's detail.
const checks = {
  // openai-node: the streaming helper accumulates the chunks into one
  // completion (it loses tool calls without index/type, concatenates
  // content as a string, and needs a finish_reason).
  'chat.completions.stream': async (model) => {
    const s = openai.chat.completions.stream({
      model,
      messages: [{ role: 'user', content: 'Say hi, then call the tool. [fake:tool]' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: weatherSchema } }],
      stream_options: { include_usage: true },
    });
    const c = await s.finalChatCompletion();
    const ch = c.choices[0];
    must(ch.finish_reason === 'tool_calls', `finish_reason ${JSON.stringify(ch.finish_reason)}, want "tool_calls"`);
    const calls = ch.message.tool_calls ?? [];
    must(calls.length === 1, `${calls.length} tool calls, want 1`);
    must(calls[0].type === 'function' && calls[0].function.name === 'get_weather', `tool call ${JSON.stringify(calls[0])}`);
    must(JSON.parse(calls[0].function.arguments).city === 'x', `arguments ${calls[0].function.arguments}`);
    const plain = await openai.chat.completions
      .stream({ model, messages: [{ role: 'user', content: 'Think, then say hi. [fake:reasoning]' }] })
      .finalChatCompletion();
    must(plain.choices[0].finish_reason === 'stop', `plain finish_reason ${JSON.stringify(plain.choices[0].finish_reason)}, want "stop"`);
    must(/^Hello from /.test(plain.choices[0].message.content ?? ''), `content ${JSON.stringify(plain.choices[0].message.content)}`);
  },
  // openai-node: the tool loop, streaming (the accumulator builds the
  // assistant turn it sends back).
  runTools: (model) => weatherToolLoop(model, true),
  // openai-node: the tool loop without streaming (it runs only the calls
  // whose type is "function": a vendor's non-stream tool_calls entry
  // without one must be normalised).
  'runTools non-stream': (model) => weatherToolLoop(model, false),
  // anthropic-sdk: the streaming helper's final message.
  'messages.stream': async (model) => {
    const m = await anthropic.messages
      .stream({ model, max_tokens: 256, messages: [{ role: 'user', content: 'Say hi' }] })
      .finalMessage();
    must(m.stop_reason === 'end_turn', `stop_reason ${m.stop_reason}`);
    const text = m.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
    must(/^Hello from /.test(text), `text ${JSON.stringify(text)}`);
  },
  // anthropic-sdk: the beta tool runner with its defaults (it keeps the
  // conversation in a message thread).
  'beta.messages.toolRunner': async (model) => {
    const runner = anthropic.beta.messages.toolRunner({
      model,
      max_tokens: 256,
      messages: [{ role: 'user', content: 'What is the weather? [fake:tool]' }],
      tools: [
        betaTool({
          name: 'get_weather',
          description: 'Weather in a city',
          inputSchema: weatherSchema,
          run: (args) => `sunny-in-${args.city}`,
        }),
      ],
    });
    const m = await runner;
    const text = m.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
    must(text === 'Tool said: sunny-in-x', `final text ${JSON.stringify(text)}`);
  },
};

// Claude Code, non-interactively, with ANTHROPIC_MODEL set to the route's
// model. The fake vendor is scripted from the prompt to call the tool.
function claudeBinary() {
  const key = `${process.platform}-${os.arch()}`;
  const candidates = [];
  for (const pkg of [`@anthropic-ai/claude-code-${key}`, `@anthropic-ai/claude-code-${key}-musl`]) {
    try {
      candidates.push(path.join(path.dirname(require.resolve(`${pkg}/package.json`)), 'claude'));
    } catch {}
  }
  // After its postinstall the wrapper's bin/claude.exe is the native binary
  // too (before it, a small stub).
  try {
    candidates.push(path.join(path.dirname(require.resolve('@anthropic-ai/claude-code/package.json')), 'bin', 'claude.exe'));
  } catch {}
  for (const c of candidates) {
    try {
      if (fs.statSync(c).size > 1 << 20) return c;
    } catch {}
  }
  return null;
}

const claude = claudeBinary();
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'conformance-'));
const dataFile = path.join(work, 'notes.txt');
fs.writeFileSync(dataFile, 'first line\nread-marker-5150\n');

// runProcess runs a client binary to its end (or the timeout) without
// blocking the other cells.
function runProcess(cmd, args, { cwd, env, timeout = 90_000 }) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeout);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr });
    });
  });
}

async function runClaude(model, prompt, allowed, { args: extraArgs = [], env: extraEnv = {} } = {}) {
  if (!claude) throw new Error('Claude Code native binary not found under node_modules (run npm ci)');
  const env = {
    PATH: process.env.PATH,
    HOME: work, // no user settings, no stored credentials
    ANTHROPIC_BASE_URL: baseURL,
    ANTHROPIC_AUTH_TOKEN: apiKey,
    ANTHROPIC_MODEL: model,
    ANTHROPIC_SMALL_FAST_MODEL: model,
    ANTHROPIC_DEFAULT_HAIKU_MODEL: model,
    ANTHROPIC_DEFAULT_SONNET_MODEL: model,
    ANTHROPIC_DEFAULT_OPUS_MODEL: model,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_AUTOUPDATER: '1',
    ...extraEnv,
  };
  const args = ['-p', prompt, '--output-format', 'json'];
  if (allowed) args.push('--allowedTools', allowed);
  args.push(...extraArgs);
  const r = await runProcess(claude, args, { cwd: work, env, timeout: 60_000 });
  let out;
  try {
    out = JSON.parse(r.stdout);
  } catch {
    throw new Error(`exit ${r.status}, not JSON: ${(r.stdout + r.stderr).slice(0, 300)}`);
  }
  must(!out.is_error, `error: ${String(out.result).slice(0, 300)}`);
  return out;
}

const claudeChecks = {
  // A run (X-Gateway-Run through ANTHROPIC_CUSTOM_HEADERS) with a tiny
  // budget: the gateway refuses the first request before the vendor
  // (402 run_budget_exceeded, x-should-retry: false), Claude Code stops
  // showing the gateway's text, and the run is there with nothing spent.
  'claude run budget': async (model) => {
    const run = `cc-${Math.random().toString(36).slice(2, 10)}`;
    let said = '';
    try {
      await runClaude(model, 'Say hi', null, { env: { ANTHROPIC_CUSTOM_HEADERS: `X-Gateway-Run: ${run}\nX-Gateway-Run-Budget: 0.00000001` } });
    } catch (e) {
      said = String(e.message);
    }
    must(said.includes(`run "${run}" reached its budget`), `Claude Code said ${JSON.stringify(said.slice(0, 400))}`);
    const r = await fetch(`${baseURL}/v1/runs/${run}`, { headers: { authorization: `Bearer ${apiKey}` } });
    const body = await r.json();
    must(r.ok && body.id === run && body.spend === '0.00000000' && body.budget === '0.00000001' && body.requests === 0,
      `GET /v1/runs/${run}: ${r.status} ${JSON.stringify(body).slice(0, 300)}`);
  },
  'claude -p': async (model) => {
    const out = await runClaude(model, 'Say hi');
    must(/^Hello from /.test(out.result), `result ${JSON.stringify(out.result)}`);
  },
  'claude Read': async (model) => {
    const call = JSON.stringify({ file_path: dataFile });
    const out = await runClaude(model, `Read the notes. [fake:call=Read:${call}]`, 'Read');
    must(out.num_turns >= 2, `${out.num_turns} turns, want a tool round trip`);
    must(out.result.includes('read-marker-5150'), `result ${JSON.stringify(out.result.slice(0, 200))}`);
  },
  'claude Bash': async (model) => {
    const call = JSON.stringify({ command: 'echo bash-marker-$((6*7))', description: 'Print a marker' });
    const out = await runClaude(model, `Run it. [fake:call=Bash:${call}]`, 'Bash');
    must(out.num_turns >= 2, `${out.num_turns} turns, want a tool round trip`);
    must(out.result.includes('bash-marker-42'), `result ${JSON.stringify(out.result.slice(0, 200))}`);
  },
};

// The Responses endpoint (R). -------------------------------------------

// usageOK checks a Responses usage object's shape and arithmetic.
function usageOK(u) {
  must(u && u.input_tokens > 0 && u.output_tokens > 0, `usage ${JSON.stringify(u)}`);
  must(u.total_tokens === u.input_tokens + u.output_tokens, `usage total ${JSON.stringify(u)}`);
  must(Number.isInteger(u.input_tokens_details?.cached_tokens), `usage without input_tokens_details.cached_tokens: ${JSON.stringify(u)}`);
  must(Number.isInteger(u.output_tokens_details?.reasoning_tokens), `usage without output_tokens_details.reasoning_tokens: ${JSON.stringify(u)}`);
}

const weatherFn = { type: 'function', name: 'get_weather', description: 'Weather in a city', parameters: weatherSchema, strict: false };

// openai-node's Responses resource.
const responsesChecks = {
  // responses.create, non-streaming.
  'responses.create': async (model) => {
    const r = await openai.responses.create({ model, input: 'Say hi', max_output_tokens: 256 });
    must(r.object === 'response' && r.status === 'completed', `status ${r.status}`);
    must(/^Hello from /.test(r.output_text), `output_text ${JSON.stringify(r.output_text)}`);
    usageOK(r.usage);
  },
  // responses.stream: the helper's events and finalResponse().
  'responses.stream': async (model) => {
    const s = openai.responses.stream({
      model,
      instructions: 'Be brief.',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'Think, then say hi. [fake:reasoning]' }] }],
      reasoning: { summary: 'auto' },
    });
    let text = '';
    const seqs = [];
    s.on('event', (e) => seqs.push(e.sequence_number));
    s.on('response.output_text.delta', (e) => (text += e.delta));
    const r = await s.finalResponse();
    must(r.status === 'completed', `status ${r.status}`);
    must(/^Hello from /.test(r.output_text) && text === r.output_text, `deltas ${JSON.stringify(text)}, output_text ${JSON.stringify(r.output_text)}`);
    must(seqs.every((n, i) => n === i), `sequence numbers ${JSON.stringify(seqs.slice(0, 40))}`);
    usageOK(r.usage);
  },
  // A function-tool loop kept by the server (previous_response_id), then
  // the stateless form Codex uses: store false, reasoning carried by the
  // caller as encrypted_content.
  'responses.tools': async (model) => {
    const first = await openai.responses.create({ model, input: 'What is the weather? [fake:tool]', tools: [weatherFn] });
    const call = first.output.find((o) => o.type === 'function_call');
    must(call && call.name === 'get_weather' && JSON.parse(call.arguments).city === 'x', `first output ${JSON.stringify(first.output)}`);
    const second = await openai.responses.create({
      model,
      previous_response_id: first.id,
      tools: [weatherFn],
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'sunny-in-x' }],
    });
    must(second.output_text === 'Tool said: sunny-in-x', `previous_response_id turn: ${JSON.stringify(second.output_text)}`);

    const input = [{ role: 'user', content: 'Think, then get the weather. [fake:reasoning] [fake:tool]' }];
    const opts = { model, store: false, include: ['reasoning.encrypted_content'], reasoning: { summary: 'auto' }, tools: [weatherFn] };
    const a = await openai.responses.create({ ...opts, input });
    const rs = a.output.find((o) => o.type === 'reasoning');
    must(rs && typeof rs.encrypted_content === 'string' && rs.encrypted_content.length > 0, `store:false output without encrypted reasoning: ${JSON.stringify(a.output).slice(0, 300)}`);
    const c2 = a.output.find((o) => o.type === 'function_call');
    must(c2, `store:false output without a call: ${JSON.stringify(a.output).slice(0, 300)}`);
    const b = await openai.responses.create({
      ...opts,
      input: [...input, ...a.output, { type: 'function_call_output', call_id: c2.call_id, output: 'sunny-in-x' }],
    });
    must(b.output_text === 'Tool said: sunny-in-x', `store:false replay: ${JSON.stringify(b.output_text)}`);
  },
};

// The OpenAI Agents SDK: an agent with one function tool, on the
// Responses model (its default) over this gateway.
setTracingDisabled(true);
const agentsChecks = {
  'agents-sdk': async (model) => {
    const getWeather = agentTool({
      name: 'get_weather',
      description: 'Weather in a city',
      parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => `sunny-in-${city}`,
    });
    const agent = new Agent({
      name: 'weather',
      instructions: 'Answer with the tool.',
      model: new OpenAIResponsesModel(openai, model),
      tools: [getWeather],
    });
    const result = await runAgent(agent, 'What is the weather? [fake:tool]');
    must(result.finalOutput === 'Tool said: sunny-in-x', `finalOutput ${JSON.stringify(result.finalOutput)}`);
  },
};

// The Vercel AI SDK: the OpenAI provider's default model (Responses),
// generateText and streamText with a tool, several steps.
const aiOpenAI = createOpenAI({ baseURL: `${baseURL}/v1`, apiKey });
const aiChecks = {
  'ai-sdk': async (model) => {
    const tools = {
      get_weather: aiTool({
        description: 'Weather in a city',
        inputSchema: z.object({ city: z.string() }),
        execute: async ({ city }) => `sunny-in-${city}`,
      }),
    };
    const g = await generateText({ model: aiOpenAI(model), prompt: 'What is the weather? [fake:tool]', tools, stopWhen: stepCountIs(3), maxRetries: 0 });
    must(g.text.startsWith('Tool said: ') && g.text.includes('sunny-in-x'), `generateText text ${JSON.stringify(g.text)}`);
    must(g.steps.length === 2, `generateText ${g.steps.length} steps, want 2`);
    const st = streamText({ model: aiOpenAI(model), prompt: 'What is the weather? [fake:tool]', tools, stopWhen: stepCountIs(3), maxRetries: 0 });
    let streamed = '';
    for await (const part of st.fullStream) {
      if (part.type === 'text-delta') streamed += part.text ?? part.delta ?? '';
      if (part.type === 'error') throw part.error instanceof Error ? part.error : new Error(JSON.stringify(part.error));
    }
    const text = await st.text;
    must(text.includes('sunny-in-x') && streamed.endsWith(text), `streamText text ${JSON.stringify(text)}, deltas ${JSON.stringify(streamed)}`);
  },
};

// Codex CLI, non-interactively ("codex exec"), with a fresh CODEX_HOME
// whose config.toml defines a model provider pointing at the gateway
// (wire_api "responses") and a model catalog entry for the route's model
// (so Codex offers its freeform apply_patch tool, as for its own models).
function codexBinary() {
  const triple = { x64: 'x86_64', arm64: 'aarch64' }[os.arch()];
  for (const libc of ['musl', 'gnu']) {
    try {
      const dir = path.dirname(require.resolve(`@openai/codex-${process.platform}-${os.arch()}/package.json`));
      const c = path.join(dir, 'vendor', `${triple}-unknown-${process.platform}-${libc}`, 'bin', 'codex');
      if (fs.statSync(c).size > 1 << 20) return c;
    } catch {}
  }
  return null;
}

const codex = codexBinary();

function tomlString(s) {
  return JSON.stringify(s);
}

async function runCodex(model, prompt, setup, { catalog: withCatalog = true, config = [] } = {}) {
  if (!codex) throw new Error('Codex native binary not found under node_modules (run npm ci)');
  const home = fs.mkdtempSync(path.join(work, 'codex-home-'));
  const cwd = fs.mkdtempSync(path.join(work, 'codex-work-'));
  if (setup) setup(cwd);
  const catalog = {
    models: [
      {
        slug: model, display_name: model, description: 'gateway route', default_reasoning_level: 'low',
        supported_reasoning_levels: [{ effort: 'low', description: 'Low' }], shell_type: 'unified_exec',
        visibility: 'list', supported_in_api: true, priority: 1, base_instructions: 'You are a coding agent.',
        supports_reasoning_summaries: true, default_reasoning_summary: 'auto', support_verbosity: false,
        default_verbosity: null, apply_patch_tool_type: 'freeform', truncation_policy: { mode: 'tokens', limit: 10000 },
        supports_parallel_tool_calls: true, context_window: 200000, effective_context_window_percent: 95,
        experimental_supported_tools: [], input_modalities: ['text'], supports_search_tool: false,
      },
    ],
  };
  if (withCatalog) fs.writeFileSync(path.join(home, 'models.json'), JSON.stringify(catalog));
  fs.writeFileSync(
    path.join(home, 'config.toml'),
    [
      `model = ${tomlString(model)}`,
      'model_provider = "gateway"',
      withCatalog ? `model_catalog_json = ${tomlString(path.join(home, 'models.json'))}` : '',
      '[model_providers.gateway]',
      'name = "gateway"',
      `base_url = ${tomlString(`${baseURL}/v1`)}`,
      'env_key = "GATEWAY_API_KEY"',
      'wire_api = "responses"',
      'request_max_retries = 0',
      'stream_max_retries = 0',
      // The workspace-write sandbox also lets commands write to /tmp and
      // $TMPDIR; take them out so that the probe below is outside every
      // writable root wherever the checkout lives (a clone under /tmp).
      '[sandbox_workspace_write]',
      'exclude_slash_tmp = true',
      'exclude_tmpdir_env_var = true',
      ...config,
      '',
    ].join('\n'),
  );
  const env = { PATH: process.env.PATH, HOME: home, CODEX_HOME: home, GATEWAY_API_KEY: apiKey };
  const last = path.join(home, 'last-message.txt');
  const args = ['exec', '--skip-git-repo-check', '--sandbox', 'workspace-write', '--output-last-message', last, prompt];
  const r = await runProcess(codex, args, { cwd, env, timeout: 90_000 });
  let message = '';
  try {
    message = fs.readFileSync(last, 'utf8');
  } catch {}
  must(r.status === 0, `codex exit ${r.status ?? r.signal}: ${(r.stderr + r.stdout).slice(-400)}`);
  return { message, cwd, output: r.stdout + r.stderr };
}

const codexChecks = {
  // As installed: no model catalog, so Codex uses its own metadata for a
  // model it knows (openai/gpt-6-sol: no tools, reasoning context
  // all_turns, verbosity low) and its fallback for the others.
  'codex-exec': async (model) => {
    const { message } = await runCodex(model, 'Say hi', null, { catalog: false });
    must(/^Hello from /.test(message), `last message ${JSON.stringify(message.slice(0, 200))}`);
  },
  // The command also tries to write outside the workspace (beside this
  // script, writable without a sandbox; /tmp is not a writable root, see
  // runCodex): workspace-write must refuse it.
  'codex-exec_command': async (model) => {
    const probe = path.join(here, `.sandbox-probe-${process.pid}-${Math.random().toString(36).slice(2)}`);
    const call = JSON.stringify({ cmd: `echo codex-marker-$((6*7)); echo x > '${probe}' || echo sandbox-denied` });
    try {
      const { message } = await runCodex(model, `Run it. [fake:reasoning] [fake:call=exec_command:${call}]`);
      must(message.startsWith('Tool said: ') && message.includes('codex-marker-42'), `last message ${JSON.stringify(message.slice(0, 300))}`);
      must(message.includes('sandbox-denied') && !fs.existsSync(probe), `the sandbox let the command write outside the workspace: ${JSON.stringify(message.slice(0, 300))}`);
    } finally {
      fs.rmSync(probe, { force: true });
    }
  },
  'codex-apply_patch': async (model) => {
    const patch = '*** Begin Patch\n*** Update File: notes.txt\n@@\n-old line\n+patched-marker-7\n*** End Patch\n';
    const call = JSON.stringify({ input: patch });
    const { message, cwd } = await runCodex(model, `Edit the notes. [fake:call=apply_patch:${call}]`, (dir) =>
      fs.writeFileSync(path.join(dir, 'notes.txt'), 'old line\n'),
    );
    const content = fs.readFileSync(path.join(cwd, 'notes.txt'), 'utf8');
    must(content === 'patched-marker-7\n', `notes.txt after the edit: ${JSON.stringify(content)}; last message ${JSON.stringify(message.slice(0, 200))}`);
  },
};

// The Gemini endpoints (G). ---------------------------------------------

// @google/genai, Google's Node SDK, with the gateway as its base URL and
// the gateway key as its API key (sent as x-goog-api-key).
const genai = new GoogleGenAI({ apiKey, httpOptions: { baseUrl: baseURL, timeout: 30_000 } });
const weatherDecl = {
  name: 'get_weather',
  description: 'Weather in a city',
  parameters: { type: GType.OBJECT, properties: { city: { type: GType.STRING, description: 'The city' } }, required: ['city'] },
};

const genaiChecks = {
  'genai.generateContent': async (model) => {
    const r = await genai.models.generateContent({ model, contents: 'Say hi', config: { maxOutputTokens: 256 } });
    must(/^Hello from /.test(r.text ?? ''), `text ${JSON.stringify(r.text)}`);
    must(r.candidates?.[0]?.finishReason === 'STOP', `finishReason ${r.candidates?.[0]?.finishReason}`);
    const u = r.usageMetadata;
    must(u && u.promptTokenCount > 0 && u.totalTokenCount === u.promptTokenCount + (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0), `usageMetadata ${JSON.stringify(u)}`);
  },
  'genai.generateContentStream': async (model) => {
    const s = await genai.models.generateContentStream({
      model,
      contents: 'Think, then say hi. [fake:reasoning]',
      config: { thinkingConfig: { includeThoughts: true } },
    });
    let text = '';
    let finish;
    let usage;
    for await (const chunk of s) {
      text += chunk.text ?? '';
      finish = chunk.candidates?.[0]?.finishReason ?? finish;
      usage = chunk.usageMetadata ?? usage;
    }
    must(/^Hello from /.test(text), `streamed text ${JSON.stringify(text)}`);
    must(finish === 'STOP', `finishReason ${finish}`);
    must(usage && usage.candidatesTokenCount > 0, `usageMetadata ${JSON.stringify(usage)}`);
  },
  'genai.functionCall': async (model) => {
    const config = { tools: [{ functionDeclarations: [weatherDecl] }] };
    const contents = [{ role: 'user', parts: [{ text: 'What is the weather? [fake:tool]' }] }];
    const first = await genai.models.generateContent({ model, contents, config });
    const calls = first.functionCalls ?? [];
    must(calls.length === 1 && calls[0].name === 'get_weather' && calls[0].args?.city === 'x', `function calls ${JSON.stringify(calls)}`);
    contents.push(first.candidates[0].content, {
      role: 'user',
      parts: [{ functionResponse: { id: calls[0].id, name: 'get_weather', response: { output: `sunny-in-${calls[0].args.city}` } } }],
    });
    const second = await genai.models.generateContent({ model, contents, config });
    must(second.text === 'Tool said: sunny-in-x', `after the function response: ${JSON.stringify(second.text)}`);
  },
  'genai.countTokens': async (model) => {
    const r = await genai.models.countTokens({ model, contents: 'Count these words, please.' });
    must(Number.isInteger(r.totalTokens) && r.totalTokens > 0, `countTokens ${JSON.stringify(r)}`);
  },
};

// Gemini CLI, non-interactively ("gemini -p ... -o json"), with a fresh
// home whose settings select the gemini-api-key auth, the gateway as
// GOOGLE_GEMINI_BASE_URL and the gateway key as GEMINI_API_KEY, in a
// trusted working folder of its own.
function geminiBinary() {
  try {
    const dir = path.dirname(require.resolve('@google/gemini-cli/package.json'));
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    const bin = typeof pkg.bin === 'string' ? pkg.bin : pkg.bin?.gemini;
    return bin ? path.join(dir, bin) : null;
  } catch {
    return null;
  }
}

const geminiCLI = geminiBinary();

async function runGemini(model, prompt, setup, settings = {}) {
  if (!geminiCLI) throw new Error('Gemini CLI not found under node_modules (run npm ci)');
  const home = fs.mkdtempSync(path.join(work, 'gemini-home-'));
  const cwd = fs.mkdtempSync(path.join(work, 'gemini-work-'));
  fs.mkdirSync(path.join(home, '.gemini'));
  fs.writeFileSync(path.join(home, '.gemini', 'settings.json'), JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } }, ...settings }));
  if (setup) setup(cwd);
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    GEMINI_API_KEY: apiKey,
    GOOGLE_GEMINI_BASE_URL: baseURL,
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
  };
  const args = [geminiCLI, '-p', prompt, '-o', 'json', '-m', model, '--approval-mode', 'yolo'];
  const r = await runProcess(process.execPath, args, { cwd, env, timeout: 90_000 });
  let out;
  try {
    out = JSON.parse(r.stdout);
  } catch {
    throw new Error(`exit ${r.status ?? r.signal}, not JSON: ${(r.stdout + r.stderr).slice(-400)}`);
  }
  must(r.status === 0 && !out.error, `exit ${r.status}: ${JSON.stringify(out.error ?? '').slice(0, 300)}`);
  return { out, cwd };
}

const geminiChecks = {
  'gemini -p': async (model) => {
    const { out } = await runGemini(model, 'Say hi');
    must(/^Hello from /.test(out.response ?? ''), `response ${JSON.stringify(out.response)}`);
  },
  // A shell command with a side effect in the working folder, approved
  // by --approval-mode yolo.
  'gemini run_shell_command': async (model) => {
    const call = JSON.stringify({ command: 'echo shell-marker-42 > side.txt && cat side.txt' });
    const { out, cwd } = await runGemini(model, `Run it. [fake:call=run_shell_command:${call}]`);
    must(out.stats?.tools?.totalCalls >= 1, `tool calls ${JSON.stringify(out.stats?.tools)}`);
    const side = fs.readFileSync(path.join(cwd, 'side.txt'), 'utf8');
    must(side === 'shell-marker-42\n', `side.txt ${JSON.stringify(side)}`);
    must((out.response ?? '').includes('shell-marker-42'), `response ${JSON.stringify((out.response ?? '').slice(0, 300))}`);
  },
  // A thinking turn that calls a tool, then the answer it led to.
  'gemini thinking+tool': async (model) => {
    const { out } = await runGemini(model, 'Think, then read the notes. [fake:reasoning] [fake:call=read_file:{"file_path":"notes.txt"}]', (dir) =>
      fs.writeFileSync(path.join(dir, 'notes.txt'), 'first line\nread-marker-5150\n'),
    );
    must(out.stats?.tools?.totalCalls >= 1, `tool calls ${JSON.stringify(out.stats?.tools)}`);
    must((out.response ?? '').includes('read-marker-5150'), `response ${JSON.stringify((out.response ?? '').slice(0, 300))}`);
  },
};

// Embeddings (E: POST /v1/embeddings; G: Gemini's embed methods). ------

// The embedding model of each column's prefix; a column whose prefix has
// none (anthropic, groq, deepseek, an operator route) checks the 400 that
// names the prefixes that embed.
const embedModels = {
  openai: 'openai/text-embedding-3-small',
  google: 'google/gemini-embedding-001',
  mistral: 'mistral/codestral-embed',
  together: 'together/BAAI/bge-large-en-v1.5',
  fireworks: 'fireworks/nomic-ai/nomic-embed-text-v1.5',
  openrouter: 'openrouter/openai/text-embedding-3-small',
};
const embedTexts = ['alpha beta', 'gamma', 'delta epsilon zeta'];
// The length asked: 8, except on together's model, whose 1024 is fixed.
const embedDims = (m) => (m.startsWith('together/') ? 1024 : 8);
const embedModelOf = (model) => embedModels[model.split('/')[0]];

// refusedForEmbeddings awaits p and wants it to fail with a 400 whose
// message names the prefixes that embed.
async function refusedForEmbeddings(p) {
  try {
    await p;
  } catch (e) {
    const status = e.status ?? e.statusCode ?? e.code;
    must(status === 400 && /openai\//.test(e.message ?? ''), `status ${status}: ${e.message}`);
    return;
  }
  throw new Error('a prefix without embeddings was served');
}

function vectorsOK(vecs, n, dims, what) {
  must(vecs.length === n, `${what}: ${vecs.length} vectors for ${n} inputs`);
  vecs.forEach((v, i) => must(v.length === dims && v.every(Number.isFinite), `${what}: vector ${i} has ${v.length} values, want ${dims}`));
  must(new Set(vecs.map((v) => v.join(','))).size === n, `${what}: vectors of different inputs are equal`);
}

const embedChecks = {
  // openai-node, floats asked explicitly.
  'embeddings.create': async (model) => {
    const m = embedModelOf(model);
    if (!m) return refusedForEmbeddings(openai.embeddings.create({ model, input: embedTexts, encoding_format: 'float' }));
    const dims = embedDims(m);
    const r = await openai.embeddings.create({ model: m, input: embedTexts, dimensions: dims, encoding_format: 'float' });
    must(r.object === 'list' && r.data.every((d, i) => d.index === i && d.object === 'embedding'), `data ${JSON.stringify(r.data.map((d) => d.index))}`);
    vectorsOK(r.data.map((d) => d.embedding), 3, dims, 'float');
    must(r.usage?.prompt_tokens > 0 && r.usage.total_tokens === r.usage.prompt_tokens, `usage ${JSON.stringify(r.usage)}`);
  },
  // openai-node, base64 asked (the string as sent) and by default (the
  // SDK asks base64 and decodes it): both the floats of the float answer.
  'embeddings.create base64': async (model) => {
    const m = embedModelOf(model);
    if (!m) return refusedForEmbeddings(openai.embeddings.create({ model, input: embedTexts, encoding_format: 'base64' }));
    const dims = embedDims(m);
    const floats = (await openai.embeddings.create({ model: m, input: embedTexts, dimensions: dims, encoding_format: 'float' })).data.map((d) => d.embedding);
    const b64 = await openai.embeddings.create({ model: m, input: embedTexts, dimensions: dims, encoding_format: 'base64' });
    b64.data.forEach((d, i) => {
      must(typeof d.embedding === 'string', `base64 data[${i}] is ${typeof d.embedding}`);
      const buf = Buffer.from(d.embedding, 'base64');
      const f = new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4);
      must(f.length === dims && Array.from(f).every((x, j) => x === Math.fround(floats[i][j])), `base64 vector ${i} differs from the float one`);
    });
    const dflt = await openai.embeddings.create({ model: m, input: embedTexts, dimensions: dims });
    dflt.data.forEach((d, i) =>
      must(d.embedding.length === dims && d.embedding.every((x, j) => x === Math.fround(floats[i][j])), `SDK-decoded vector ${i} differs from the float one`),
    );
  },
};

// @google/genai: embedContent (the SDK sends batchEmbedContents), one
// content and three.
const genaiEmbedChecks = {
  'genai.embedContent': async (model) => {
    const m = embedModelOf(model);
    if (!m) return refusedForEmbeddings(genai.models.embedContent({ model, contents: 'gamma' }));
    const dims = embedDims(m);
    const r = await genai.models.embedContent({ model: m, contents: 'gamma', config: { outputDimensionality: dims } });
    vectorsOK((r.embeddings ?? []).map((e) => e.values ?? []), 1, dims, 'single');
  },
  'genai.embedContent batch': async (model) => {
    const m = embedModelOf(model);
    if (!m) return refusedForEmbeddings(genai.models.embedContent({ model, contents: embedTexts }));
    const dims = embedDims(m);
    const config = { outputDimensionality: dims, ...(m.startsWith('google/') ? { taskType: 'RETRIEVAL_DOCUMENT', title: 'Notes' } : {}) };
    const r = await genai.models.embedContent({ model: m, contents: embedTexts, config });
    const vecs = (r.embeddings ?? []).map((e) => e.values ?? []);
    vectorsOK(vecs, 3, dims, 'batch');
    const one = await genai.models.embedContent({ model: m, contents: 'gamma', config });
    must(one.embeddings[0].values.every((x, j) => x === vecs[1][j]), 'batch order: vector 1 is not the vector of input 1');
  },
};

// The AI SDK's embed and embedMany through its OpenAI provider.
const aiEmbedChecks = {
  'ai-sdk embed': async (model) => {
    const m = embedModelOf(model);
    if (!m) return refusedForEmbeddings(aiEmbed({ model: aiOpenAI.embedding(model), value: 'gamma', maxRetries: 0 }));
    const dims = embedDims(m);
    const r = await aiEmbed({ model: aiOpenAI.embedding(m), value: 'gamma', maxRetries: 0, providerOptions: { openai: { dimensions: dims } } });
    vectorsOK([r.embedding], 1, dims, 'embed');
    must(r.usage?.tokens > 0, `usage ${JSON.stringify(r.usage)}`);
  },
  'ai-sdk embedMany': async (model) => {
    const m = embedModelOf(model);
    if (!m) return refusedForEmbeddings(aiEmbedMany({ model: aiOpenAI.embedding(model), values: embedTexts, maxRetries: 0 }));
    const dims = embedDims(m);
    const r = await aiEmbedMany({ model: aiOpenAI.embedding(m), values: embedTexts, maxRetries: 0, providerOptions: { openai: { dimensions: dims } } });
    vectorsOK(r.embeddings, 3, dims, 'embedMany');
    must(r.usage?.tokens > 0, `usage ${JSON.stringify(r.usage)}`);
  },
};

// The routes: the C endpoint for the OpenAI SDK, M for the Anthropic SDK
// and Claude Code, R for the Responses clients, G for Google's SDK and
// Gemini CLI.
const plan = [
  ...Object.keys(checks).slice(0, 3).map((c) => ({ client: c, endpoint: 'C', fn: checks[c] })),
  ...Object.keys(checks).slice(3).map((c) => ({ client: c, endpoint: 'M', fn: checks[c] })),
  ...Object.entries(claudeChecks).map(([c, fn]) => ({ client: c, endpoint: 'M', fn, lane: 'claude' })),
  ...Object.entries(codexChecks).map(([c, fn]) => ({ client: c, endpoint: 'R', fn })),
  ...Object.entries(responsesChecks).map(([c, fn]) => ({ client: c, endpoint: 'R', fn })),
  ...Object.entries(agentsChecks).map(([c, fn]) => ({ client: c, endpoint: 'R', fn })),
  ...Object.entries(aiChecks).map(([c, fn]) => ({ client: c, endpoint: 'R', fn })),
  ...Object.entries(genaiChecks).map(([c, fn]) => ({ client: c, endpoint: 'G', fn })),
  ...Object.entries(geminiChecks).map(([c, fn]) => ({ client: c, endpoint: 'G', fn })),
  ...Object.entries(embedChecks).map(([c, fn]) => ({ client: c, endpoint: 'E', fn })),
  ...Object.entries(genaiEmbedChecks).map(([c, fn]) => ({ client: c, endpoint: 'G', fn })),
  ...Object.entries(aiEmbedChecks).map(([c, fn]) => ({ client: c, endpoint: 'E', fn })),
  ...(process.env.CONFORMANCE_MCP ? mcpChecks({ runClaude, runCodex, runGemini, must, baseURL, apiKey }) : []),
].filter((p) => onlyClients.length === 0 || onlyClients.includes(p.client));

// Every cell, run concurrently: jobs at a time, one at a time per lane.
const cells = plan.flatMap((p) => vendors.map((v) => ({ p, v })));
const results = new Array(cells.length); // {client, endpoint, vendor, status, detail}
const lanes = new Map();
async function runCell(i) {
  const { p, v } = cells[i];
  let ok = true;
  let detail = '';
  const t0 = Date.now();
  try {
    await p.fn(models[v]);
  } catch (e) {
    ok = false;
    detail = (e && e.message) || String(e);
  }
  const key = `${p.client} ${v}`;
  let status = ok ? 'pass' : 'FAIL';
  if (expected.has(key)) {
    status = ok ? 'XPASS' : 'xfail';
    if (!ok) detail = `expected: ${expected.get(key)} (${detail})`;
    else detail = 'listed in expected-failures.txt but passed: remove it';
  }
  results[i] = { client: p.client, endpoint: p.endpoint, vendor: v, status, detail, ms: Date.now() - t0 };
}
let next = 0;
async function worker() {
  while (next < cells.length) {
    const i = next++;
    const lane = cells[i].p.lane;
    if (lane) {
      const prev = lanes.get(lane) ?? Promise.resolve();
      const mine = prev.then(() => runCell(i));
      lanes.set(lane, mine);
      await mine;
    } else {
      await runCell(i);
    }
  }
}
await Promise.all(Array.from({ length: jobs }, worker));

// The matrix: one row per client, one column per vendor.
const w = Math.max(...plan.map((p) => p.client.length)) + 6;
console.log(''.padEnd(w) + vendors.map((v) => v.padEnd(11)).join(''));
for (const p of plan) {
  const row = results.filter((r) => r.client === p.client);
  console.log(`${p.client} (${p.endpoint})`.padEnd(w) + row.map((r) => r.status.padEnd(11)).join(''));
}
for (const r of results) {
  if (r.status !== 'pass') console.log(`${r.status} ${r.client} ${r.endpoint}/${r.vendor}: ${r.detail}`);
}
fs.rmSync(work, { recursive: true, force: true });
const passed = results.filter((r) => r.status === 'pass').length;
const failed = results.length - passed;
const bad = results.filter((r) => r.status === 'FAIL' || r.status === 'XPASS').length;
if (bad === 0 && failed > 0) console.log(`(all ${failed} failures are listed in expected-failures.txt)`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(bad === 0 ? 0 : 1);
