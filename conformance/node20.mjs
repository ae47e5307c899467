// Lets the MCP conformance suite's command line start on Node 20 (CI's):
// its bundle imports fs.globSync (Node 22), used only by its tier-check
// command, which the suite's server and client runs never reach. For
// that bundle alone, "fs" resolves to the real module plus a globSync
// that says so if it is ever called.
//
//   node --import ./node20.mjs node_modules/@modelcontextprotocol/conformance/dist/index.js server --url ...
import fs from 'node:fs';
import { register } from 'node:module';

const shim = [
  "import * as fs from 'node:fs';",
  "export * from 'node:fs';",
  'export default fs;',
  "export function globSync() { throw new Error('fs.globSync needs Node 22 (the tier-check command)'); }",
].join('\n');

const hooks = `
export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL && context.parentURL.includes('/@modelcontextprotocol/conformance/')) {
    return { url: 'data:text/javascript,' + encodeURIComponent(${JSON.stringify(shim)}), shortCircuit: true };
  }
  return next(specifier, context);
}`;

if (typeof fs.globSync !== 'function') register('data:text/javascript,' + encodeURIComponent(hooks));
