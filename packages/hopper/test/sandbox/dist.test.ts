/**
 * The built pool: children start the same from the ESM and the CommonJS build (the bootstrap is
 * a string, not a file either build must find), and a child process whose parent is killed with
 * SIGKILL exits by itself instead of being left behind.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type * as Sandbox from '../../src/runtime/sandbox/index.js';
import { MODES, fixture, isAlive, makeJob, never, recordingHooks } from './support.js';

const packageRoot = fileURLToPath(new URL('../../', import.meta.url));
const builds = {
  esm: `${packageRoot}dist/esm/runtime/sandbox/index.js`,
  cjs: `${packageRoot}dist/cjs/runtime/sandbox/index.js`,
};

function requireBuild(file: string): void {
  if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build -w hopper\` first (npm test does).`);
}

async function load(build: keyof typeof builds): Promise<typeof Sandbox> {
  requireBuild(builds[build]);
  if (build === 'cjs') return createRequire(import.meta.url)(builds.cjs) as typeof Sandbox;
  return (await import(pathToFileURL(builds.esm).href)) as typeof Sandbox;
}

describe.each(['esm', 'cjs'] as const)('the %s build', (build) => {
  it.each(MODES)('runs ESM and CommonJS processors in $mode', async ({ useWorkerThreads }) => {
    const { SandboxPool } = await load(build);
    for (const file of ['echo.mjs', 'echo.cjs']) {
      const pool = new SandboxPool(fixture(file), { useWorkerThreads, maxChildren: 1 });
      try {
        const result = await pool.run(makeJob({ build }), recordingHooks(), never);
        expect(result).toMatchObject({ format: file.endsWith('.mjs') ? 'esm' : 'cjs', data: { build } });
      } finally {
        await pool.close();
      }
      expect(pool.childIds).toEqual([]);
    }
  });
});

/** Whether `pid` has exited: gone, or a zombie waiting for an init that does not reap. */
function hasExited(pid: number): boolean {
  if (!isAlive(pid)) return true;
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') ?? false;
  } catch {
    return true;
  }
}

describe('a child process whose parent dies', () => {
  it('exits by itself when its parent is killed with SIGKILL, even with its event loop held open', async () => {
    requireBuild(builds.cjs);
    const script = `
      const { SandboxPool } = require(${JSON.stringify(builds.cjs)});
      const pool = new SandboxPool(${JSON.stringify(fixture('hold-open.mjs'))}, { maxChildren: 1 });
      pool.on('spawned', (pid) => console.log('child=' + pid));
      const hooks = { log: async () => { console.log('running'); return 1; } };
      pool.run(${JSON.stringify(makeJob())}, hooks, new AbortController().signal);`;
    const parent = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    await new Promise<void>((resolve, reject) => {
      parent.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('running')) resolve();
      });
      parent.once('exit', (code) => reject(new Error(`the parent exited early (code ${code}): ${out}`)));
    });
    const childPid = Number(/child=(\d+)/.exec(out)?.[1]);
    expect(isAlive(childPid)).toBe(true);
    const parentGone = new Promise((resolve) => parent.once('exit', resolve));
    parent.kill('SIGKILL');
    await parentGone;
    // The orphan is not ours to wait for: poll (its IPC channel closes, it exits at once).
    const deadline = performance.now() + 5_000;
    while (!hasExited(childPid) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(hasExited(childPid), `orphaned child ${childPid} still running`).toBe(true);
  });
});
