// After `tsc -p tsconfig.cjs.json`: makes dist/cjs a CommonJS build that loads wherever CommonJS does.
//
// 1. The build lives under a package whose "type" is "module": mark its folder as CommonJS.
// 2. temporal-polyfill ships ES modules only. Node 20.19+ can `require()` an ES module, but Jest's
//    module system (and older tools) cannot: `require('hopper-queue')` failed there with "Cannot use
//    import statement outside a module". So the CommonJS build gets a CommonJS copy of the very
//    version the ESM build imports, bundled here with rolldown into dist/cjs/vendor/, and
//    src/schedule/temporal.ts (the one module that takes Temporal from the package) requires that
//    copy instead. Temporal values never cross Hopper's API (it takes strings, numbers and Dates),
//    so the two copies cannot meet.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const root = fileURLToPath(new URL('..', import.meta.url));
const cjs = join(root, 'dist/cjs');
writeFileSync(join(cjs, 'package.json'), '{ "type": "commonjs" }\n');

// The copy: resolved from this package, as the ESM build resolves it.
const require = createRequire(join(root, 'package.json'));
const entry = require.resolve('temporal-polyfill'); // its "default" export: index.js
const pkgDir = dirname(entry);
const { version, license } = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
const pinned = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).dependencies['temporal-polyfill'];
if (version !== pinned) throw new Error(`temporal-polyfill ${version} is installed, package.json pins ${pinned}: run npm ci`);
const vendored = 'vendor/temporal-polyfill.js';
await build({
  input: entry,
  platform: 'node',
  logLevel: 'warn',
  output: {
    file: join(cjs, vendored),
    format: 'cjs',
    banner: `/* temporal-polyfill ${version} (${license}, https://github.com/fullcalendar/temporal-polyfill), bundled as CommonJS for hopper-queue's CommonJS build. */`,
  },
});

// The one require of the package in the CommonJS build: pointed at the copy.
const temporalModule = join(cjs, 'schedule/temporal.js');
const source = readFileSync(temporalModule, 'utf8');
const from = 'require("temporal-polyfill")';
if (source.split(from).length !== 2) throw new Error(`${temporalModule}: expected one ${from}`);
writeFileSync(temporalModule, source.replace(from, `require("../${vendored}")`));
