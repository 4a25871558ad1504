// Found by the fault suite (test/faults, row redis-kill-repeated): after a reconnect, a worker's
// orphan release walks the active set in several calls (ZSCAN) and spares the attempts it held
// when the walk began. The dispatcher kept claiming during the walk, so a later step released
// jobs claimed meanwhile, while they ran (no stall counted, the attempt number given back), and
// they ran twice under one attempt number. The walk now holds every other call until it ends.
import { describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backend/create.js';
import { Worker, type Job } from '../../src/index.js';
import { dropClientConnections } from '../helpers/connections.js';
import { startRedisServer } from '../helpers/redis-server.js';
import { useHopper } from '../helpers/hopper.js';
import { until } from '../helpers/wait.js';

const env = useHopper();

describe('orphan release after a reconnect', () => {
  it('never releases a job claimed during its walk: no job runs twice', async () => {
    env.expectErrors(/EPIPE|ECONNRESET|Connection is closed|ECONNREFUSED/); // the dropped connections
    const server = await startRedisServer();
    env.track({ close: () => server.stop() });
    const name = env.queueName();
    const opts = { connection: server.url, prefix: env.prefix };
    const queue = env.queue(name, opts);
    // 1,500 jobs held by a dead worker (an hour's lock) make the active set big enough for the
    // release to walk it in several steps.
    for (let i = 0; i < 3; i++) await queue.addBulk(Array.from({ length: 500 }, () => ({ name: 'ghost', data: {} })));
    const ghost = env.track(createBackend({ connection: server.url, prefix: env.prefix, queueName: name, role: 'command' }));
    for (let round = 1; round <= 2; round++) await ghost.claim({ count: 1000, lockMs: 3_600_000, tokenPrefix: `ghost:${round}:` });
    expect((await queue.getJobCounts('active')).active).toBe(1500);

    const total = 3000;
    await queue.addBulk(Array.from({ length: total }, (_, i) => ({ name: 'work', data: { i } })));
    const runs = new Map<string, number>();
    const attempts = new Set<string>();
    let reused = 0;
    const worker = env.track(
      new Worker(
        name,
        async (job: Job) => {
          runs.set(job.id as string, (runs.get(job.id as string) ?? 0) + 1);
          const key = `${job.id}/${job.attemptsStarted}`;
          if (attempts.has(key)) reused++;
          attempts.add(key);
        },
        { ...opts, concurrency: 8, skipStalledCheck: true },
      ),
    );
    let completed = 0;
    worker.on('completed', () => completed++);
    // Drop the connections a few times while the worker is busy: each reconnect walks the active set.
    for (let drop = 1; drop <= 4; drop++) {
      await until(async () => completed >= (drop * total) / 6, `${drop * 16}% of the jobs to complete`, 20_000);
      await dropClientConnections(server.url);
    }
    await until(async () => completed >= total, 'every job to complete', 60_000);
    expect(reused).toBe(0);
    expect([...runs.values()].filter((n) => n > 1)).toEqual([]);
    expect(runs.size).toBe(total);
  }, 120_000);
});
