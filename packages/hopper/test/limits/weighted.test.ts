/**
 * Weighted rate limits (docs/limits.md): a limiter whose unit is each job's `cost`, on a worker or
 * the whole queue. Claims take jobs while their weight fits the window, FIFO (a job that does not
 * fit holds the head until it fits); a job heavier than the whole window is refused at add (queue
 * limit) or failed by the worker (worker limit); grouped queues take them too (test/groups/weighted.test.ts
 * for group limits). On an injected clock: the window reopens when
 * the clock moves, without sleeping.
 */
import { describe, expect, it } from 'vitest';
import { CostAboveRateLimitError, InvalidOptionsError, UnrecoverableError, Worker, type Job } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';
import { once } from '../helpers/wait.js';

const env = useHopper({ fakeClock: true });

/** Takes jobs without blocking until none is given; returns their names. */
async function drain(worker: Worker, token: string): Promise<string[]> {
  const names: string[] = [];
  for (;;) {
    const job = await worker.getNextJob(`${token}-${names.length}`, { block: false });
    if (!job) return names;
    names.push(job.name);
  }
}

describe('weighted rate limits', () => {
  it("a worker's weighted limiter takes jobs while their cost fits the window, keeps FIFO, and reopens as the window slides", async () => {
    const name = env.queueName('w');
    const queue = env.queue(name);
    const worker = env.worker(name, null, { autorun: false, limiter: { max: 100, duration: 60_000, weight: 'cost' } });
    await queue.add('a60', {}, { cost: 60 });
    await queue.add('b30', {}, { cost: 30 });
    await queue.add('c20', {}, { cost: 20 }); // does not fit (90 + 20 > 100)...
    await queue.add('d5', {}, { cost: 5 }); // ...and the lighter job behind it does not overtake it
    expect(await drain(worker, 't1')).toEqual(['a60', 'b30']);
    env.clock!.advance(30_000);
    await queue.add('e', {}); // no cost: weighs 1
    expect(await drain(worker, 't2')).toEqual([]);
    env.clock!.advance(30_001); // a60 and b30 left the window
    expect(await drain(worker, 't3')).toEqual(['c20', 'd5', 'e']);
    expect(await queue.getRateLimitTtl()).toBe(-2); // no queue-wide limit: the worker's is its own
  });

  it("the queue's weighted limit applies to workers without a limiter, reads back, and refuses at add a job above the whole window", async () => {
    const name = env.queueName('q');
    const queue = env.queue(name);
    await queue.setGlobalRateLimit(1000, 60_000, { weighted: true });
    expect(await queue.getGlobalRateLimit()).toEqual({ max: 1000, duration: 60_000, weight: 'cost' });
    const err = await queue.add('huge', {}, { cost: 1001 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CostAboveRateLimitError);
    expect((err as CostAboveRateLimitError).message).toMatch(/cost 1001 is above .* weighted rate limit of 1000 per 60000 ms/);
    // addBulk is all or nothing: the light job is not written either.
    await expect(
      queue.addBulk([
        { name: 'light', data: {}, opts: { cost: 1 } },
        { name: 'huge', data: {}, opts: { cost: 5000 } },
      ]),
    ).rejects.toBeInstanceOf(CostAboveRateLimitError);
    expect(await queue.count()).toBe(0);
    // Coalesced adds: only the heavy one is refused.
    const [ok, refused] = await Promise.allSettled([queue.add('x', {}, { cost: 700 }), queue.add('y', {}, { cost: 2000 })]);
    expect(ok.status).toBe('fulfilled');
    expect(refused.status === 'rejected' && refused.reason).toBeInstanceOf(CostAboveRateLimitError);
    await queue.add('z', {}, { cost: 400 });
    const worker = env.worker(name, null, { autorun: false });
    expect(await drain(worker, 't')).toEqual(['x']);
    expect(await queue.getRateLimitTtl()).toBe(0);
    env.clock!.advance(60_001);
    expect(await drain(worker, 'u')).toEqual(['z']);
    // Unweighted again: counts jobs.
    await queue.setGlobalRateLimit(1, 60_000);
    expect(await queue.getGlobalRateLimit()).toEqual({ max: 1, duration: 60_000 });
    await queue.removeGlobalRateLimit();
    expect(await queue.getGlobalRateLimit()).toBeNull();
  });

  it('a worker fails a job heavier than its weighted window (UnrecoverableError) instead of starving it', async () => {
    const name = env.queueName('heavy');
    const queue = env.queue(name);
    const ran: string[] = [];
    const worker = env.worker(
      name,
      async (job: Job) => {
        ran.push(job.name);
      },
      { limiter: { max: 100, duration: 60_000, weight: 'cost' } },
    );
    const failed = once<[Job, Error]>(worker, 'failed');
    await queue.add('too-big', {}, { cost: 101 });
    const [job, err] = await failed;
    expect(job.name).toBe('too-big');
    expect(err).toBeInstanceOf(UnrecoverableError);
    expect(err.message).toBe(
      'job cost 101 is above the weighted rate limit of 100 per 60000 ms: it could never start. Split the job, lower its cost option, or raise limiter.max.',
    );
    expect(ran).toEqual([]);
    // It took nothing from the window: a full-size job still fits.
    const completed = once<[Job]>(worker, 'completed');
    await queue.add('fits', {}, { cost: 100 });
    expect((await completed)[0].name).toBe('fits');
  });

  it('refuses bad weighted options with clear errors', async () => {
    const name = env.queueName('bad');
    const queue = env.queue(name);
    expect(
      () =>
        new Worker(name, null, {
          connection: env.url,
          limiter: { max: 10, duration: 1000, weight: ((job: Job<{ tokens: number }>) => job.data.tokens) as never },
        }),
    ).toThrow(/weight must be 'cost', not a function: .* queue.add\(name, data, \{ cost: job.data.estimatedTokens \}\)/);
    expect(() => new Worker(name, null, { connection: env.url, limiter: { max: 10, duration: 1000, weight: 'tokens' as never } })).toThrow(
      InvalidOptionsError,
    );
    await expect(queue.add('x', {}, { cost: -1 })).rejects.toThrow(/cost must be a finite number >= 0/);
    await expect(queue.add('x', {}, { cost: Number.NaN })).rejects.toThrow(InvalidOptionsError);
  });

  it("a worker's weighted limiter applies to a queue that uses groups (docs/groups.md)", async () => {
    const name = env.queueName('grouped');
    const queue = env.queue(name);
    await queue.add('g1', {}, { group: { id: 'g1' }, cost: 6 });
    await queue.add('g2', {}, { group: { id: 'g2' }, cost: 5 });
    await queue.add('u', {}, { cost: 1 });
    const worker = env.worker(name, null, { autorun: false, limiter: { max: 10, duration: 1000, weight: 'cost' } });
    expect((await drain(worker, 't')).sort()).toEqual(['g1', 'u']);
    env.clock!.advance(1001);
    expect(await drain(worker, 'u')).toEqual(['g2']);
  });
});
