/**
 * Five processes upsert the same scheduler concurrently while it runs for about ten ticks (real
 * time, every 300 ms): each occurrence exists exactly once, and none is missing.
 */
import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Job } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';

// Child processes open the test's connection: on SQLite, a file database (see useHopper).
const env = useHopper({ processes: true });
const script = fileURLToPath(new URL('../fixtures/upsert-loop.mjs', import.meta.url));
const built = fileURLToPath(new URL('../../dist/esm/index.js', import.meta.url));

describe('job schedulers across processes', () => {
  it('5 processes upserting the same scheduler over ~10 ticks create each occurrence once', async () => {
    if (!existsSync(built))
      throw new Error('This test runs child processes on the built package: run `npm run build` first (npm test does).');
    const name = env.queueName();
    const ran: string[] = [];
    const worker = env.worker(name, async (job: Job) => ran.push(job.id as string), { concurrency: 5 });
    await worker.waitUntilReady();
    const children = Array.from({ length: 5 }, () => fork(script, [env.url, env.prefix, name, '3000'], { stdio: 'ignore' }));
    const calls = await Promise.all(
      children.map(
        (child) =>
          new Promise<number>((resolve, reject) => {
            child.on('message', (m: { calls: number }) => resolve(m.calls));
            child.on('exit', (code) => code !== 0 && reject(new Error(`upsert process exited with ${code}`)));
          }),
      ),
    );
    expect(Math.min(...calls)).toBeGreaterThan(20);
    const queue = env.queue(name);
    await queue.removeJobScheduler('shared');
    const instants = ran.map((id) => Number(id.split(':')[2])).sort((a, b) => a - b);
    expect(new Set(ran).size).toBe(ran.length);
    // Consecutive grid slots, none missing, none twice.
    for (let i = 1; i < instants.length; i++) expect(instants[i] - instants[i - 1]).toBe(300);
    expect(instants.length).toBeGreaterThanOrEqual(9);
  }, 30_000);
});
