// Bundle the storefront (storefront/app.js, instantsearch.js and the adapter) into the search
// service's static folder: src/aisle/services/search/storefront/app.js (a build product, not committed).
// Run by `npm run build`, which `make install` runs after `npm ci`.

import { build } from 'esbuild';

const outfile = new URL('../../../src/aisle/services/search/storefront/app.js', import.meta.url).pathname;
await build({
  entryPoints: [new URL('./app.js', import.meta.url).pathname],
  bundle: true,
  format: 'esm',
  target: ['es2020'],
  minify: true,
  sourcemap: true,
  legalComments: 'none',
  outfile,
  logLevel: 'warning',
});
console.log(`storefront bundle: ${outfile}`);
