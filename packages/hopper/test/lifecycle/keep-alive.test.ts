/**
 * A running Worker keeps its process alive until closed, and a closed one does not hold it (issue
 * 34). On SQLite every runtime timer is unref'd and no socket is open: a process holding only a
 * rate-limited Worker exited with code 0 while jobs waited (a process manager does not restart
 * that). The child (test/fixtures/keepalive-worker.mjs, on the built package) runs one job, is
 * rate-limited for a minute, and an unref'd timer then proves the process is still alive.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper({ processes: true });
const script = fileURLToPath(new URL('../fixtures/keepalive-worker.mjs', import.meta.url));
const built = fileURLToPath(new URL('../../dist/esm/index.js', import.meta.url));

describe('a process holding only a Worker', () => {
  it('stays alive while the worker runs (rate-limited, jobs waiting) and exits by itself once it is closed', async () => {
    if (!existsSync(built)) throw new Error('This test runs a child process on the built package: run `npm run build` first.');
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.waitUntilReady();
    // No IPC channel: it would keep the child alive by itself.
    const child = spawn(process.execPath, [script, env.url, env.prefix, name], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    try {
      await new Promise<void>((resolve, reject) => {
        const check = (): void => {
          if (out.includes('READY')) resolve();
        };
        child.stdout.on('data', check);
        void exited.then(() => reject(new Error(`the worker process exited before it was ready: ${out}`)));
      });
      await queue.addBulk([1, 2, 3].map((n) => ({ name: 'job', data: { n } })));
      const code = await exited;
      const lines = out.trim().split('\n');
      // Alive through the rate limit, then closed, then exited on its own with nothing left to hold it.
      expect(lines).toContain('ALIVE');
      expect(lines.filter((l) => l.startsWith('RAN'))).toHaveLength(1);
      expect(lines.slice(-2)).toEqual(['CLOSED', 'EXIT running=false']);
      expect(code).toBe(0);
      expect(await queue.getJobCounts('waiting', 'active')).toEqual({ waiting: 2, active: 0 });
    } finally {
      clearTimeout(killer);
      child.kill('SIGKILL');
    }
  });
});
