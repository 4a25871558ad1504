// The CommonJS build lives under a package whose "type" is "module": mark its folder as CommonJS.
import { writeFileSync } from 'node:fs';
writeFileSync(new URL('../dist/cjs/package.json', import.meta.url), '{ "type": "commonjs" }\n');
