/**
 * A worker process SIGKILLed mid-job: its job is rescued by another worker and completed once.
 * Runs on both backends (on SQLite the child opens the test's file database). A worker whose
 * Redis server disappears: test/backend-redis/connection.test.ts.
 */
import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { once } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';

// Child processes open the test's connection: on SQLite, a file database (see useHopper).
const env = useHopper({ processes: true });
const crashWorker = fileURLToPath(new URL('../fixtures/crash-worker.mjs', import.meta.url));
const built = fileURLToPath(new URL('../../dist/esm/index.js', import.meta.url));

describe('crashes (real processes)', () => {
  it('a job whose worker is SIGKILLed mid-job is completed exactly once by another worker', async () => {
    if (!existsSync(built))
      throw new Error('This test runs a child worker from the built package: run `npm run build` first (npm test does).');
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('crashy', { v: 1 }, { removeOnComplete: false });
    const child = fork(crashWorker, [env.url, env.prefix, name, '800'], { stdio: 'ignore' });
    const started = await new Promise<{ started: string; pid: number }>((resolve, reject) => {
      child.on('message', (m: { started?: string; pid: number; error?: string }) =>
        m.started ? resolve(m as { started: string; pid: number }) : reject(new Error(m.error)),
      );
      child.on('exit', (code) => reject(new Error(`crash worker exited early (${code})`)));
    });
    expect(started.started).toBe(job.id);
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    expect(await job.getState()).toBe('active');

    let runs = 0;
    const survivor = env.worker(
      name,
      async () => {
        runs++;
        return 'survived';
      },
      { stalledInterval: 100 },
    );
    // Both awaited from now: the rescued job may start (its claim rides on the idle wait's
    // connection) before the rescue's own reply is read.
    const stalled = once<[string]>(survivor, 'stalled');
    const completed = once(survivor, 'completed');
    const [stalledId] = await stalled;
    expect(stalledId).toBe(job.id);
    await completed;
    const stored = await queue.getJob(job.id as string);
    expect(stored?.returnvalue).toBe('survived');
    expect(stored?.stalledCounter).toBe(1);
    expect(stored?.attemptsStarted).toBe(2);
    expect(runs).toBe(1);
  });
});
