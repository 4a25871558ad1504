/**
 * Output streams and the job's outcome: writes a processor did not await are stored before the job
 * is recorded (no chunk lost, no unhandled LockLostError); a reader follows every attempt until the
 * job is finished for good, even when an attempt ended its output (`job.stream.end()`) and was then
 * retried ('all' reads each attempt; 'latest' follows into the retry).
 */
import { describe, expect, it } from 'vitest';
import type { Job, StreamChunk } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';
import { once, signal } from '../helpers/wait.js';

const env = useHopper();

async function readAll<T>(iterable: AsyncIterable<StreamChunk<T>>): Promise<StreamChunk<T>[]> {
  const out: StreamChunk<T>[] = [];
  for await (const chunk of iterable) out.push(chunk);
  return out;
}

describe('stream writes the processor did not await', () => {
  it('are all stored before the job completes, with no unhandled rejection', async () => {
    const name = env.queueName('unawaited');
    const queue = env.queue(name);
    const worker = env.worker(name, async (job: Job) => {
      for (let i = 0; i < 500; i++) void job.stream.write(`c${i}`);
      void job.stream.end();
      return 'done';
    });
    const job = await queue.add('gen', {}, { removeOnComplete: false });
    await once(worker, 'completed');
    expect(await queue.getJob(job.id as string).then((j) => j?.returnvalue)).toBe('done');
    const chunks = await readAll(queue.readStream(job.id as string, { follow: false }));
    expect(chunks.map((c) => c.data)).toEqual(Array.from({ length: 500 }, (_, i) => `c${i}`));
  });

  it('of a failed attempt are stored before its retry starts', async () => {
    const name = env.queueName('unawaited-fail');
    const queue = env.queue(name);
    const worker = env.worker(name, async (job: Job) => {
      for (let i = 0; i < 300; i++) void job.stream.write({ attempt: job.attemptsMade + 1, i });
      throw new Error('after writing');
    });
    const job = await queue.add('gen', {}, { attempts: 2, removeOnFail: false });
    await once(worker, 'failed', (j: Job) => j.attemptsMade === 2, 20_000);
    const chunks = await readAll(queue.readStream(job.id as string, { attempts: 'all', follow: false }));
    expect(chunks.length).toBe(600);
    expect(chunks.filter((c) => c.attempt === 1).length).toBe(300);
  });
});

describe('readers across retries', () => {
  /** A job whose first attempt writes 'a1', ends its output and fails; its retry writes 'b1', 'b2' and ends. */
  async function retriedJob(): Promise<{
    id: string;
    queue: ReturnType<typeof env.queue>;
    firstWritten: Promise<void>;
    failFirst: () => void;
    worker: ReturnType<typeof env.worker>;
  }> {
    const name = env.queueName('retried');
    const queue = env.queue(name);
    const written = signal();
    const fail = signal();
    const worker = env.worker(name, async (job: Job) => {
      if (job.attemptsMade === 0) {
        await job.stream.write('a1');
        await job.stream.end();
        written.resolve();
        await fail.promise;
        throw new Error('first attempt failed');
      }
      await job.stream.write('b1');
      await job.stream.write('b2');
      await job.stream.end();
      return 'ok';
    });
    const job = await queue.add('gen', {}, { attempts: 2, removeOnComplete: false });
    return { id: job.id as string, queue, firstWritten: written.promise, failFirst: () => fail.resolve(), worker };
  }

  for (const attempts of ['all', 'latest'] as const) {
    it(`'${attempts}' joined during attempt 1 reads the retry's chunks too`, async () => {
      const { id, queue, firstWritten, failFirst } = await retriedJob();
      await firstWritten;
      const reading = readAll(queue.readStream(id, { attempts }));
      failFirst();
      const chunks = await reading;
      expect(chunks.map((c) => [c.attempt, c.data])).toEqual([
        [1, 'a1'],
        [2, 'b1'],
        [2, 'b2'],
      ]);
    });
  }

  it("'all' from the start after the job completed replays every attempt", async () => {
    const { id, queue, failFirst, worker } = await retriedJob();
    failFirst();
    await once(worker, 'completed');
    const chunks = await readAll(queue.readStream(id, { attempts: 'all' }));
    expect(chunks.map((c) => [c.attempt, c.data])).toEqual([
      [1, 'a1'],
      [2, 'b1'],
      [2, 'b2'],
    ]);
    const latest = await readAll(queue.readStream(id));
    expect(latest.map((c) => [c.attempt, c.data])).toEqual([
      [2, 'b1'],
      [2, 'b2'],
    ]);
  });

  it('a single attempt that ends its output still ends the read', async () => {
    const name = env.queueName('single');
    const queue = env.queue(name);
    const release = signal();
    env.worker(name, async (job: Job) => {
      await job.stream.write('only');
      await job.stream.end();
      // Still running after its end: the reader must not wait for it (no retry is possible).
      await release.promise;
      return 'ok';
    });
    const job = await queue.add('gen', {});
    const chunks = await readAll(queue.readStream(job.id as string));
    release.resolve();
    expect(chunks.map((c) => c.data)).toEqual(['only']);
  });
});
