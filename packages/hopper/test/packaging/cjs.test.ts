/**
 * Packaging: the built package works from CommonJS (`require('hopper-queue')`) and from ESM, as an app
 * outside the library would load it. Its types from CommonJS (`module: commonjs`) are checked by
 * the root `npm run typecheck` (it compiles test/fixtures/cjs/tsconfig.json), which `npm test` runs:
 * not again here (a second tsc run of ~20 s).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { useHopper } from '../helpers/hopper.js';

const run = promisify(execFile);
const env = useHopper();
const fixtures = fileURLToPath(new URL('../fixtures/cjs/', import.meta.url));
const packageRoot = fileURLToPath(new URL('../../', import.meta.url));

function requireBuild(): void {
  if (!existsSync(`${packageRoot}dist/cjs/index.js`))
    throw new Error('Run `npm run build` first (npm test does): this test loads the built package.');
}

describe('packaging', () => {
  it('runs a CommonJS app that requires hopper', async () => {
    requireBuild();
    const { stdout } = await run(process.execPath, [`${fixtures}app.cjs`, env.url, env.prefix]);
    expect(stdout.trim()).toBe('result=42');
  });

  it('runs the same from ESM through the package name', async () => {
    requireBuild();
    const script = `import { Queue, Worker } from 'hopper-queue';
      const [url, prefix] = process.argv.slice(1);
      const q = new Queue('esm', { connection: url, prefix });
      const w = new Worker('esm', async (job) => job.data.n - 1, { connection: url, prefix });
      const done = new Promise((r) => w.on('completed', (_j, v) => r(v)));
      await q.add('dec', { n: 43 });
      console.log('result=' + (await done));
      await w.close(); await q.close();`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script, env.url, env.prefix], { cwd: packageRoot });
    expect(stdout.trim()).toBe('result=42');
  });
});
