/**
 * Weighted group rate limits (docs/groups.md): a group's limiter with `weight: 'cost'` (its own,
 * or the queue's group default) counts each job's `cost` (default 1) in the group's sliding
 * window, inside the claim. A group whose head job does not fit is parked until it does, without
 * holding up the other groups; a job heavier than its group's whole window is refused at add, and
 * one left heavier by a lowered limit is failed by the worker with the reason. With a weighted
 * queue limit too, a job must fit both windows. On an injected clock: windows reopen when the
 * clock moves, without sleeping.
 */
import { describe, expect, it } from 'vitest';
import { CostAboveRateLimitError, InvalidOptionsError, UnrecoverableError, type Job, type Worker } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';
import { once } from '../helpers/wait.js';

const env = useHopper({ fakeClock: true });

/** Takes jobs one at a time without blocking until none is given; returns their names. */
async function drain(worker: Worker, token: string): Promise<string[]> {
  const names: string[] = [];
  for (;;) {
    const job = await worker.getNextJob(`${token}-${names.length}`, { block: false });
    if (!job) return names;
    names.push(job.name);
  }
}

const grouped = (id: string, cost?: number) => (cost === undefined ? { group: { id } } : { group: { id }, cost });

describe('weighted group rate limits', () => {
  it("counts each job's cost in its group's window; a group whose head does not fit is parked without blocking the others", async () => {
    const name = env.queueName('gw');
    const queue = env.queue(name);
    await queue.setGroupOptions('a', { limiter: { max: 100, duration: 60_000, weight: 'cost' } });
    expect((await queue.getGroup('a'))?.limiter).toEqual({ max: 100, duration: 60_000, weight: 'cost' });
    await queue.add('a60', {}, grouped('a', 60));
    await queue.add('a30', {}, grouped('a', 30));
    await queue.add('a20', {}, grouped('a', 20)); // does not fit (90 + 20 > 100)...
    await queue.add('a5', {}, grouped('a', 5)); // ...and the lighter job behind it does not overtake it
    await queue.add('b1', {}, grouped('b'));
    await queue.add('b2', {}, grouped('b'));
    await queue.add('b3', {}, grouped('b'));
    const worker = env.worker(name, null, { autorun: false });
    // Group b goes on while group a waits for its window.
    expect((await drain(worker, 't1')).sort()).toEqual(['a30', 'a60', 'b1', 'b2', 'b3']);
    expect((await queue.getGroup('a'))?.status).toBe('limited');
    env.clock!.advance(30_000);
    expect(await drain(worker, 't2')).toEqual([]);
    env.clock!.advance(30_001); // a60 and a30 left the window
    expect(await drain(worker, 't3')).toEqual(['a20', 'a5']);
  });

  it('a job without a cost weighs 1; group defaults can be weighted, read back, and a group limiter of its own wins', async () => {
    const name = env.queueName('gd');
    const queue = env.queue(name);
    await queue.setGroupDefaults({ limiter: { max: 2, duration: 60_000, weight: 'cost' } });
    expect(await queue.getGroupDefaults()).toEqual({ limiter: { max: 2, duration: 60_000, weight: 'cost' } });
    await queue.setGroupOptions('own', { limiter: { max: 1, duration: 60_000 } }); // counts jobs, whatever their cost
    for (let i = 0; i < 3; i++) await queue.add(`d${i}`, {}, grouped('d'));
    await queue.add('own-big', {}, grouped('own', 1000));
    await queue.add('own-next', {}, grouped('own', 1));
    const worker = env.worker(name, null, { autorun: false });
    expect((await drain(worker, 't1')).sort()).toEqual(['d0', 'd1', 'own-big']);
    env.clock!.advance(60_001);
    expect((await drain(worker, 't2')).sort()).toEqual(['d2', 'own-next']);
    // Unweighted again: the default counts jobs.
    await queue.setGroupDefaults({ limiter: { max: 5, duration: 1000 } });
    expect(await queue.getGroupDefaults()).toEqual({ limiter: { max: 5, duration: 1000 } });
  });

  it("refuses at add a job heavier than its group's whole window, writing nothing", async () => {
    const name = env.queueName('gh');
    const queue = env.queue(name);
    await queue.setGroupDefaults({ limiter: { max: 50, duration: 1000, weight: 'cost' } });
    await queue.setGroupOptions('big', { limiter: { max: 500, duration: 1000, weight: 'cost' } });
    const err = await queue.add('huge', {}, grouped('x', 51)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CostAboveRateLimitError);
    expect((err as CostAboveRateLimitError).groupId).toBe('x');
    expect((err as Error).message).toMatch(/cost 51 is above group "x"'s weighted rate limit of 50 per 1000 ms .*nothing was written/);
    // addBulk is all or nothing; a delayed job is refused too (it could never start either).
    await expect(
      queue.addBulk([
        { name: 'light', data: {}, opts: grouped('x', 5) },
        { name: 'heavy', data: {}, opts: { ...grouped('big', 501), delay: 1000 } },
      ]),
    ).rejects.toMatchObject({ groupId: 'big', max: 500, cost: 501 });
    expect(await queue.count()).toBe(0);
    expect(await queue.getGroupsCount()).toBe(1); // 'big', for its settings
    // Coalesced adds: only the heavy one is refused; the same cost fits the bigger group.
    const [refused, ok, ungrouped] = await Promise.allSettled([
      queue.add('y', {}, grouped('x', 60)),
      queue.add('z', {}, grouped('big', 60)),
      queue.add('u', {}, { cost: 60 }),
    ]);
    expect(refused.status === 'rejected' && refused.reason).toBeInstanceOf(CostAboveRateLimitError);
    expect([ok.status, ungrouped.status]).toEqual(['fulfilled', 'fulfilled']);
    expect(await queue.count()).toBe(2);
  });

  it("fails with the reason a job left heavier than its group's window by a lowered limit, instead of starving it", async () => {
    const name = env.queueName('gl');
    const queue = env.queue(name);
    await queue.setGroupOptions('g', { limiter: { max: 100, duration: 60_000, weight: 'cost' } });
    await queue.add('heavy', {}, grouped('g', 80));
    await queue.add('next', {}, grouped('g', 10));
    await queue.setGroupRateLimit('g', 50, 60_000, { weighted: true });
    const ran: string[] = [];
    const worker = env.worker(name, async (job: Job) => {
      ran.push(job.name);
    });
    const failed = once<[Job, Error]>(worker, 'failed');
    const completed = once<[Job]>(worker, 'completed');
    const [job, err] = await failed;
    expect(job.name).toBe('heavy');
    expect(err).toBeInstanceOf(UnrecoverableError);
    expect(err.message).toBe(
      'job cost 80 is above group "g"\'s weighted rate limit of 50 per 60000 ms (lowered after the job was added): it could never start. ' +
        "Split the job, lower its cost option, or raise the group's limiter.max.",
    );
    expect((await completed)[0].name).toBe('next'); // the failed job took nothing from the window
    expect(ran).toEqual(['next']);
  });

  it("under a weighted queue limit a job must fit both windows; one that fits its group but not the queue keeps its group's turn", async () => {
    const name = env.queueName('gq');
    const queue = env.queue(name);
    await queue.setGlobalRateLimit(100, 60_000, { weighted: true });
    await queue.setGroupOptions('a', { limiter: { max: 1000, duration: 60_000, weight: 'cost' } });
    await queue.setGroupOptions('c', { limiter: { max: 10, duration: 60_000, weight: 'cost' } });
    await queue.add('a70', {}, grouped('a', 70));
    await queue.add('b20', {}, grouped('b', 20));
    await queue.add('c5', {}, grouped('c', 5));
    await queue.add('c6', {}, grouped('c', 6)); // does not fit group c's window (5 + 6 > 10)
    await queue.add('a20', {}, grouped('a', 20)); // fits group a, not the queue (1 + 70 + 20 + 5 + 20 > 100)
    await queue.add('b5', {}, grouped('b', 5)); // would fit the queue, but does not overtake a20
    await queue.add('u1', {}, { cost: 1 });
    const worker = env.worker(name, null, { autorun: false });
    expect((await drain(worker, 't1')).sort()).toEqual(['a70', 'b20', 'c5', 'u1']);
    env.clock!.advance(60_001);
    // Group a takes its kept turn first; then the others, each fitting both windows.
    const next = await drain(worker, 't2');
    expect(next[0]).toBe('a20');
    expect(next.slice(1).sort()).toEqual(['b5', 'c6']);
  });

  it('refuses bad weighted group options with typed errors, changing nothing', async () => {
    const name = env.queueName('gb');
    const queue = env.queue(name);
    const byFunction = { max: 10, duration: 1000, weight: ((job: Job<{ tokens: number }>) => job.data.tokens) as never };
    await expect(queue.setGroupOptions('g', { limiter: byFunction })).rejects.toThrow(
      /limiter.weight must be 'cost', not a function: .* queue.add\(name, data, \{ cost: job.data.estimatedTokens \}\)/,
    );
    await expect(queue.setGroupDefaults({ limiter: byFunction })).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(queue.setGroupOptions('g', { limiter: { max: 10, duration: 1000, weight: 'tokens' as never } })).rejects.toThrow(
      /limiter.weight must be 'cost' \(each job weighs its cost option\), got "tokens"/,
    );
    await expect(queue.setGroupDefaults({ limiter: { max: 10, duration: 1000, weight: 2 as never } })).rejects.toBeInstanceOf(
      InvalidOptionsError,
    );
    await expect(queue.setGroupRateLimit('g', 10, 1000, { weighted: 'yes' as never })).rejects.toThrow(
      /setGroupRateLimit\(groupId, max, duration, opts\)\.weighted must be a boolean/,
    );
    expect(await queue.getGroup('g')).toBeUndefined();
    expect(await queue.getGroupDefaults()).toEqual({});
  });
});
