// Marks a package's CommonJS build as CommonJS: `node scripts/mark-commonjs.mjs <dir>` writes
// <dir>/package.json with "type": "commonjs" (the package itself is "type": "module"), so that Node
// reads the .js files there as CommonJS. Used by the build of packages that ship both builds.
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node scripts/mark-commonjs.mjs <dir of the CommonJS build>');
  process.exit(2);
}
writeFileSync(join(resolve(dir), 'package.json'), '{ "type": "commonjs" }\n');
