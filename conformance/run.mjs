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

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { betaTool } from '@anthropic-ai/sdk/helpers/beta/json-schema';

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
const only = (process.env.CONFORMANCE_VENDORS || '').split(',').filter(Boolean);
const vendors = Object.keys(models).filter((v) => only.length === 0 || only.includes(v));

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
  runTools: async (model) => {
    const runner = openai.chat.completions.runTools({
      model,
      stream: true,
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
  },
  // openai-node: the tool loop without streaming (it runs only the calls
  // whose type is "function": a vendor's non-stream tool_calls entry
  // without one must be normalised).
  'runTools non-stream': async (model) => {
    const runner = openai.chat.completions.runTools({
      model,
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
  },
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

function runClaude(model, prompt, allowed) {
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
  };
  const args = ['-p', prompt, '--output-format', 'json'];
  if (allowed) args.push('--allowedTools', allowed);
  const r = spawnSync(claude, args, { cwd: work, env, encoding: 'utf8', timeout: 60_000 });
  if (r.error) throw r.error;
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
  'claude -p': async (model) => {
    const out = runClaude(model, 'Say hi');
    must(/^Hello from /.test(out.result), `result ${JSON.stringify(out.result)}`);
  },
  'claude Read': async (model) => {
    const call = JSON.stringify({ file_path: dataFile });
    const out = runClaude(model, `Read the notes. [fake:call=Read:${call}]`, 'Read');
    must(out.num_turns >= 2, `${out.num_turns} turns, want a tool round trip`);
    must(out.result.includes('read-marker-5150'), `result ${JSON.stringify(out.result.slice(0, 200))}`);
  },
  'claude Bash': async (model) => {
    const call = JSON.stringify({ command: 'echo bash-marker-$((6*7))', description: 'Print a marker' });
    const out = runClaude(model, `Run it. [fake:call=Bash:${call}]`, 'Bash');
    must(out.num_turns >= 2, `${out.num_turns} turns, want a tool round trip`);
    must(out.result.includes('bash-marker-42'), `result ${JSON.stringify(out.result.slice(0, 200))}`);
  },
};

// The routes: the C endpoint for the OpenAI SDK, M for the others.
const plan = [
  ...Object.keys(checks).slice(0, 3).map((c) => ({ client: c, endpoint: 'C', fn: checks[c] })),
  ...Object.keys(checks).slice(3).map((c) => ({ client: c, endpoint: 'M', fn: checks[c] })),
  ...Object.entries(claudeChecks).map(([c, fn]) => ({ client: c, endpoint: 'M', fn })),
];

const results = []; // {client, endpoint, vendor, status, detail}
for (const p of plan) {
  for (const v of vendors) {
    let ok = true;
    let detail = '';
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
    results.push({ client: p.client, endpoint: p.endpoint, vendor: v, status, detail });
  }
}

// The matrix: one row per client, one column per vendor.
const w = Math.max(...plan.map((p) => p.client.length)) + 4;
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
