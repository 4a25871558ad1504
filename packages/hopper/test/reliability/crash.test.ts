import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CloseTimeoutError, Queue, Worker } from '../../src/index.js';
import { once, signal } from '../helpers/wait.js';
import { startRedisServer } from '../helpers/redis-server.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();
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
    const [stalledId] = await once<[string]>(survivor, 'stalled');
    expect(stalledId).toBe(job.id);
    await once(survivor, 'completed');
    const stored = await queue.getJob(job.id as string);
    expect(stored?.returnvalue).toBe('survived');
    expect(stored?.stalledCounter).toBe(1);
    expect(stored?.attemptsStarted).toBe(2);
    expect(runs).toBe(1);
  });

  it('close() does not hang when Redis is gone: it gives up after closeTimeout and says so', async () => {
    const server = await startRedisServer();
    env.track({ close: () => server.stop() });
    const name = env.queueName();
    const queue = new Queue(name, { connection: server.url, prefix: env.prefix });
    await queue.add('x', {});
    await queue.close();
    const started = signal();
    const release = signal();
    const worker = new Worker(
      name,
      async () => {
        started.resolve();
        await release.promise;
      },
      { connection: server.url, prefix: env.prefix, closeTimeout: 300 },
    );
    const errors: unknown[] = [];
    worker.on('error', (err) => errors.push(err));
    await started.promise;
    await server.stop();
    release.resolve();
    const t0 = Date.now();
    await expect(worker.close()).rejects.toBeInstanceOf(CloseTimeoutError);
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(worker.isRunning()).toBe(false);
  });
});
