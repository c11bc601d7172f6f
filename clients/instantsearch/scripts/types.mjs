// The adapter's TypeScript types, generated from each Aisle service's OpenAPI document, then the adapter
// type-checked against them (tsc --checkJs, tsconfig.json): a field renamed or retyped in a service's
// schema fails here, not in a shopper's browser.
//
// Usage: node scripts/types.mjs [OPENAPI_DIR]
//   OPENAPI_DIR: the folder of <service>.json documents (default ../openapi, written by
//   `aisle openapi --out clients/openapi`, which `make clients` runs). Writes types/<service>.d.ts.
// Exit code 0 when the adapter type-checks, 1 when it does not or a document is missing.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const source = resolve(process.argv[2] || join(root, '..', 'openapi'));
// The adapter reads the search service's answers; every service's types are written for client code.
const REQUIRED = ['search'];

if (!existsSync(source)) {
  console.error(`no OpenAPI documents at ${source}: run \`aisle openapi --out ${source}\` first`);
  process.exit(1);
}
const documents = readdirSync(source).filter((f) => f.endsWith('.json')).sort();
const missing = REQUIRED.filter((s) => !documents.includes(`${s}.json`));
if (missing.length) {
  console.error(`missing in ${source}: ${missing.map((s) => `${s}.json`).join(', ')}`);
  process.exit(1);
}

const out = join(root, 'types');
mkdirSync(out, { recursive: true });
for (const file of documents) {
  const ast = await openapiTS(pathToFileURL(join(source, file)));
  const target = join(out, file.replace(/\.json$/, '.d.ts'));
  writeFileSync(target, astToString(ast));
  console.log(`types: ${target}`);
}

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const check = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.json')], { stdio: 'inherit' });
if (check.status !== 0) {
  console.error('the adapter does not type-check against the services\' OpenAPI types');
  process.exit(1);
}
console.log(`the adapter type-checks against ${documents.length} services' types`);
