/**
 * Runs of turns (`job.continueWith`): their cost (`job.reportCost`), a run budget (`maxCost`),
 * and cancelling a whole run (`queue.cancelRun`) while a turn is active or pending.
 */
import { describe, expect, it } from 'vitest';
import { CancelledError, InvalidDataError, InvalidOptionsError, UnrecoverableError, type Job } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';
import { once, signal, until } from '../helpers/wait.js';

const env = useHopper();

describe('runs', () => {
  it('keeps the run cost across turns (a report replaces the earlier one) and stops the run at maxCost', async () => {
    const name = env.queueName('budget');
    const queue = env.queue(name);
    const costs: (number | undefined)[] = [];
    const worker = env.worker(name, async (job: Job<{ n: number }>) => {
      costs.push(await job.reportCost(10)); // an estimate...
      costs.push(await job.reportCost(40)); // ...corrected: replaces it
      await job.continueWith({ n: job.data.n + 1 }, { maxCost: 100 });
    });
    const failed = once<[Job, Error]>(worker, 'failed');
    await queue.add('turn', { n: 0 }, { jobId: 'agent-1' });
    const [job, err] = await failed;
    // Turn 0's cost waits on the job (no run yet), then seeds the run; turns 1 and 2 add to it.
    expect(costs).toEqual([undefined, undefined, 50, 80, 90, 120]);
    expect(job.id).toBe('agent-1:2');
    expect(err).toBeInstanceOf(UnrecoverableError);
    expect(err.message).toBe('Run "agent-1" has cost 120, reaching its maxCost (100): turn 3 was not added.');
    expect(await queue.getJob('agent-1:3')).toBeUndefined();
    expect(await queue.getRun('agent-1')).toEqual({
      id: 'agent-1',
      lastTurn: 'agent-1:2',
      cost: 120,
      cancelled: false,
      cancelReason: undefined,
    });
  });

  it('cancelRun aborts the active turn, and the run adds no turn after it', async () => {
    env.expectErrors(/Cancel/);
    const name = env.queueName('cancel-active');
    const queue = env.queue(name);
    const running = signal<string>();
    const continued: unknown[] = [];
    const worker = env.worker(name, async (job, _token, abortSignal) => {
      if (job.id === 'run-a:2') {
        running.resolve(job.id);
        await new Promise((resolve) => abortSignal?.addEventListener('abort', resolve));
        // A turn that tries to go on after the cancel is refused.
        continued.push(await job.continueWith({}).catch((e: unknown) => e));
        return;
      }
      await job.continueWith({});
    });
    const failed = once<[Job, Error]>(worker, 'failed');
    await queue.add('turn', {}, { jobId: 'run-a' });
    expect(await running.promise).toBe('run-a:2');
    expect(await queue.cancelRun('run-a', 'user pressed stop')).toEqual({ turn: 'run-a:2', result: 'signalled' });
    const [job, err] = await failed;
    expect(job.id).toBe('run-a:2');
    expect(err).toBeInstanceOf(CancelledError);
    expect(continued[0]).toBeInstanceOf(CancelledError);
    expect(await queue.getJob('run-a:3')).toBeUndefined();
    expect(await queue.getRun('run-a')).toMatchObject({ lastTurn: 'run-a:2', cancelled: true, cancelReason: 'user pressed stop' });
    // Cancelling again changes nothing (answered as the first time): the first reason stays.
    expect((await queue.cancelRun('run-a', 'again')).result).toBe('cancelled');
    expect((await queue.getRun('run-a'))?.cancelReason).toBe('user pressed stop');
  });

  it('cancelRun cancels a pending turn; a run that never continued is its first job', async () => {
    const name = env.queueName('cancel-pending');
    const queue = env.queue(name);
    const worker = env.worker(name, async (job) => {
      if (job.id === 'run-b') await job.continueWith({}, { delay: 60_000 }); // the next turn waits a minute
    });
    await queue.add('turn', {}, { jobId: 'run-b' });
    await until(async () => (await queue.getJobState('run-b:1')) === 'delayed', 'the pending turn');
    expect(await queue.cancelRun('run-b')).toEqual({ turn: 'run-b:1', result: 'cancelled' });
    expect(await queue.getJobState('run-b:1')).toBe('failed');

    await worker.pause();
    await queue.add('turn', {}, { jobId: 'solo' });
    expect(await queue.cancelRun('solo', 'not needed')).toEqual({ turn: 'solo', result: 'cancelled' });
    expect(await queue.getRun('solo')).toMatchObject({ lastTurn: undefined, cancelled: true });
    await queue.add('turn', {}, { jobId: 'solo-2:0' });
    expect(await queue.cancelRun('solo-2')).toEqual({ turn: 'solo-2:0', result: 'cancelled' });
  });

  it("a grouped turn's next turn joins its group (inherited with the options) and keeps to the group's limits", async () => {
    const name = env.queueName('grouped');
    const queue = env.queue(name);
    await queue.setGroupOptions('g', { concurrency: 1 });
    await queue.add('turn', { n: 0 }, { jobId: 'loop', group: { id: 'g' } });
    await queue.add('other', {}, { jobId: 'other', group: { id: 'g' } });
    const worker = env.worker(name, null, { autorun: false });
    const first = await worker.getNextJob('t0', { block: false });
    expect(first?.id).toBe('loop');
    expect(await first!.continueWith({ n: 1 })).toBe('loop:1');
    // In the group's backlog behind `other`, and held back by the group's concurrency while `loop` runs.
    expect((await queue.getGroupJobs('g')).map((j) => j.id)).toEqual(['other', 'loop:1']);
    expect(await worker.getNextJob('t1', { block: false })).toBeUndefined();
    await first!.moveToCompleted('done', 't0');
    const second = await worker.getNextJob('t2', { block: false });
    expect(second?.id).toBe('other');
    await second!.moveToCompleted('done', 't2');
    const third = await worker.getNextJob('t3', { block: false });
    expect(third?.id).toBe('loop:1');
    expect(third?.opts.group).toEqual({ id: 'g' });
    expect(third?.data).toEqual({ n: 1 });
    await third!.moveToCompleted('done', 't3');
    expect(await queue.getGroup('g')).toMatchObject({ waiting: 0, active: 0 });
  });

  it('refuses bad input with typed errors', async () => {
    const name = env.queueName('bad');
    const queue = env.queue(name);
    await expect(queue.cancelRun('')).rejects.toBeInstanceOf(InvalidDataError);
    const results: unknown[] = [];
    const worker = env.worker(name, async (job) => {
      results.push(await job.reportCost(-1).catch((e: unknown) => e));
      results.push(await job.reportCost(Number.NaN).catch((e: unknown) => e));
      results.push(await job.continueWith({}, { maxCost: -5 }).catch((e: unknown) => e));
      results.push(await job.continueWith({}, { deduplication: { id: 'x' } }).catch((e: unknown) => e));
    });
    const done = once(worker, 'completed');
    await queue.add('x', {});
    await done;
    expect(results.slice(0, 2).every((r) => r instanceof InvalidDataError)).toBe(true);
    // continueWith's options go through the validation layer with the job options (issue 34): InvalidOptionsError.
    expect(results[2]).toBeInstanceOf(InvalidOptionsError);
    expect((results[2] as InvalidOptionsError).option).toBe('continueWith.maxCost');
    expect(results[3]).toBeInstanceOf(InvalidOptionsError);
    expect(await queue.getJobCounts('waiting')).toEqual({ waiting: 0 });
  });
});
