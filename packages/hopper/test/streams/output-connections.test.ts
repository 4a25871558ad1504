/**
 * Job output streams on Redis: readers share blocking connections (docs/streams.md), so 1,000
 * readers do not open 1,000 Redis connections. Its own file because it counts a Redis server's
 * connections, a Redis-only capability (a SQLite wait holds no connection: docs/backends.md).
 */
import { describe, expect, it } from 'vitest';
import type { StreamChunk } from '../../src/index.js';
import { createAdmin } from '../../src/backend/create.js';
import { Queue, Worker } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';
import { startRedisServer } from '../helpers/redis-server.js';
import { signal, until } from '../helpers/wait.js';

const env = useHopper({ fakeClock: true });

async function readAll<T>(iterable: AsyncIterable<StreamChunk<T>>): Promise<StreamChunk<T>[]> {
  const out: StreamChunk<T>[] = [];
  for await (const chunk of iterable) out.push(chunk);
  return out;
}

/** A gate a processor waits on, opened by the test. */
function gate(): { wait: () => Promise<void>; open: () => void } {
  const s = signal();
  return { wait: () => s.promise, open: () => s.resolve() };
}

describe('job output streams on Redis', () => {
  it('1,000 readers on 600 jobs share a few connections, and each reads its own job', async () => {
    // A server of its own: its connection count is this test's alone. Everything on it is closed
    // here, before the server stops.
    const server = await startRedisServer();
    const admin = createAdmin({ connection: server.url, prefix: env.prefix });
    const name = env.queueName('many');
    const queue = new Queue(name, { connection: server.url, prefix: env.prefix });
    const start = gate();
    const worker = new Worker(
      name,
      async (job) => {
        await start.wait();
        await job.stream.write(`out ${job.id}`);
        await job.stream.end();
      },
      { connection: server.url, prefix: env.prefix, concurrency: 600 },
    );
    try {
      const clients = async (): Promise<number> => Number(/connected_clients:(\d+)/.exec(await admin.serverInfo())?.[1]);
      const jobs = await queue.addBulk(Array.from({ length: 600 }, () => ({ name: 'g', data: {} })));
      await until(async () => (await queue.getJobCounts('active')).active === 600, 'all 600 jobs running', 30_000);
      const before = await clients();
      const readers = Array.from({ length: 1000 }, (_, i) => readAll(queue.readStream(jobs[i % 600].id as string)));
      // Every reader is waiting live (nothing written yet) before the jobs write.
      await until(async () => (await clients()) >= before + 2, 'the shared reader connections', 30_000);
      const during = await clients();
      start.open();
      const results = await Promise.all(readers);
      results.forEach((chunks, i) => expect(chunks.map((c) => c.data)).toEqual([`out ${jobs[i % 600].id}`]));
      // Two lanes: 600 streams, 500 per lane.
      expect(during - before).toBe(2);
    } finally {
      start.open();
      await worker.close();
      await queue.close();
      await admin.close();
      await server.stop();
    }
  });
});
