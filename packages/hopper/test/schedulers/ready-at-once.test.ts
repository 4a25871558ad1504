/**
 * An occurrence already due when its scheduler plans it (a new `every` schedule's first run,
 * whose grid slot has begun) is made ready at once, as in BullMQ, and wakes a blocked worker. As
 * the scheduler's pending run it holds the scheduler: the next occurrence is planned when a
 * worker takes it (before it runs), or when the next fire falls due if nobody has. Upserting a
 * changed spec withdraws a pending run no worker has taken (delayed, waiting or prioritized).
 * `getJobScheduler` has BullMQ's shape; `getJobSchedulerState` Hopper's counters.
 */
import { describe, expect, it } from 'vitest';
import { SchedulerJobError, type Job } from '../../src/index.js';
import { once, signal, until } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper({ fakeClock: true });
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const T0 = Date.UTC(2026, 0, 1); // the fake clock's start: on every minute grid

const ids = (jobs: Job[]) => jobs.map((job) => job.id);

describe('an occurrence due when its scheduler plans it', () => {
  it('is waiting at once; the next one is planned when a worker takes it', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const first = await queue.upsertJobScheduler('poll', { every: MINUTE }, { name: 'poll' });
    expect(first?.id).toBe(`sched:poll:${T0}`);
    expect(first?.opts.delay).toBe(0);
    expect(await queue.getJobState(first!.id!)).toBe('waiting');
    expect(await queue.getJobCounts('waiting', 'delayed')).toEqual({ waiting: 1, delayed: 0 });
    // BullMQ's shape; `next` is the ready run's due time until a worker takes it.
    expect(await queue.getJobScheduler('poll')).toEqual({
      key: 'poll',
      name: 'poll',
      iterationCount: 1,
      every: MINUTE,
      offset: 0,
      next: T0,
    });

    const worker = env.worker(name, null);
    const taken = await worker.getNextJob('token-1');
    expect(taken?.id).toBe(first!.id);
    // Planned before getNextJob returned.
    expect(ids(await queue.getDelayed())).toEqual([`sched:poll:${T0 + MINUTE}`]);
    await taken!.moveToCompleted('ok', 'token-1');
    expect(await queue.getJobSchedulerState('poll')).toMatchObject({
      fired: 1,
      created: 2,
      skippedByOverlap: 0,
      missed: 0,
      next: T0 + MINUTE,
    });
    // Earlier Hopper versions' counters stay readable on getJobScheduler, not enumerable.
    const json = (await queue.getJobScheduler('poll')) as unknown as Record<string, number>;
    expect([json.fired, json.created, json.skippedByOverlap, json.missed]).toEqual([1, 2, 0, 0]);
    expect(Object.keys(json).sort()).toEqual(['every', 'iterationCount', 'key', 'name', 'next', 'offset']);
  });

  it('wakes a blocked worker, which runs it with the next one already planned', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const delayedWhileRunning: string[][] = [];
    const worker = env.worker(name, async () => {
      delayedWhileRunning.push(ids(await queue.getDelayed()) as string[]);
      return 'ok';
    });
    await once(worker, 'drained');
    const completed = once<[Job]>(worker, 'completed');
    await queue.upsertJobScheduler('poll', { every: MINUTE }, { name: 'poll' });
    // The fake clock does not move: only the upsert's wake-up brings the job to the worker.
    expect((await completed)[0].id).toBe(`sched:poll:${T0}`);
    expect(delayedWhileRunning).toEqual([[`sched:poll:${T0 + MINUTE}`]]);
  });

  it('is the pending run: remove and cancel are refused, drain and clean keep it', async () => {
    const queue = env.queue(env.queueName());
    const id = (await queue.upsertJobScheduler('poll', { every: MINUTE }, { name: 'poll' }))!.id!;
    await expect(queue.remove(id)).rejects.toThrow(`Job ${id} belongs to a job scheduler and cannot be removed directly. remove`);
    await expect(queue.cancelJob(id)).rejects.toBeInstanceOf(SchedulerJobError);
    await queue.add('other', {});
    await queue.add('urgent', {}, { priority: 1 });
    await queue.add('later', {}, { delay: 1000 });
    await queue.drain(true);
    expect(ids(await queue.getJobs(['waiting', 'prioritized', 'delayed']))).toEqual([id]);
    await queue.add('old', {});
    expect(await queue.clean(0, 100, 'wait')).toHaveLength(1);
    expect(ids(await queue.getWaiting())).toEqual([id]);
  });

  it('a prioritized pending run is kept by drain too', async () => {
    const queue = env.queue(env.queueName());
    const id = (await queue.upsertJobScheduler('p', { every: MINUTE }, { name: 'p', opts: { priority: 2 } }))!.id!;
    await queue.add('a', {}, { priority: 1 });
    await queue.add('b', {}, { priority: 3 });
    await queue.drain();
    expect(ids(await queue.getPrioritized())).toEqual([id]);
  });

  it('upserting a changed spec withdraws a pending run no worker took, waiting or prioritized', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const events = env.events(name);
    await events.waitUntilReady();
    await queue.upsertJobScheduler('w', { every: MINUTE }, { name: 'w' });
    await queue.upsertJobScheduler('p', { every: MINUTE }, { name: 'p', data: { v: 1 }, opts: { priority: 3 } });
    expect(await queue.getJobCounts('waiting', 'prioritized')).toEqual({ waiting: 1, prioritized: 1 });
    const removed = once<[{ jobId: string; prev: string }]>(events, 'removed');

    await queue.upsertJobScheduler('w', { every: 2 * MINUTE }, { name: 'w' });
    // T0 is on the new grid too: its current slot, due at once, under the new spec.
    const [w] = await queue.getWaiting();
    expect(w.id).toBe(`sched:w:${T0}`);
    expect(w.opts.repeat?.every).toBe(2 * MINUTE);
    expect((await removed)[0]).toMatchObject({ jobId: `sched:w:${T0}`, prev: 'waiting' });

    await queue.upsertJobScheduler('p', { pattern: '0 3 * * *', tz: 'UTC' }, { name: 'p', data: { v: 2 }, opts: { priority: 3 } });
    expect(await queue.getPrioritizedCount()).toBe(0);
    expect(ids(await queue.getDelayed())).toEqual([`sched:p:${T0 + 3 * HOUR}`]);
    expect(await queue.getJobScheduler('p')).toEqual({
      key: 'p',
      name: 'p',
      iterationCount: 2,
      pattern: '0 3 * * *',
      tz: 'UTC',
      offset: 0,
      next: T0 + 3 * HOUR,
      template: { data: { v: 2 }, opts: { priority: 3 } },
    });
    // The withdrawn run never ran: it is not counted as fired.
    expect(await queue.getJobSchedulerState('p')).toMatchObject({ fired: 0, created: 2 });
    expect(await queue.getJobSchedulerState('w')).toMatchObject({ fired: 1, created: 2 });
  });

  it('never withdraws a run a worker took, nor a ready one while the queue is paused', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.upsertJobScheduler('a', { every: MINUTE }, { name: 'a' });
    const worker = env.worker(name, null);
    const taken = await worker.getNextJob('token-a');
    expect(taken?.id).toBe(`sched:a:${T0}`);
    await queue.upsertJobScheduler('a', { every: 2 * MINUTE }, { name: 'a' });
    expect(await queue.getJobState(taken!.id!)).toBe('active');
    // Its planned successor was withdrawn; the new spec resumes after the taken run's instant.
    expect(ids(await queue.getDelayed())).toEqual([`sched:a:${T0 + 2 * MINUTE}`]);
    await taken!.moveToCompleted('ok', 'token-a');

    await queue.pause();
    await queue.upsertJobScheduler('b', { every: MINUTE }, { name: 'b' });
    await queue.upsertJobScheduler('b', { every: 2 * MINUTE }, { name: 'b' });
    expect(ids(await queue.getWaiting())).toEqual([`sched:b:${T0}`]);
    expect(ids(await queue.getDelayed())).toEqual([`sched:a:${T0 + 2 * MINUTE}`, `sched:b:${T0 + 2 * MINUTE}`]);
  });

  it('a pending run nobody takes holds its scheduler until the next fire is due; overlap judges that one', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    // A worker busy with another job takes nothing else, but its scheduler tick runs.
    await queue.add('busy', {});
    const release = signal();
    const worker = env.worker(name, async (job) => {
      if (job.name === 'busy') await release.promise;
    });
    await once(worker, 'active');
    await queue.upsertJobScheduler('all', { every: MINUTE, overlap: 'allowAll' }, { name: 'all' });
    await queue.upsertJobScheduler('skip', { every: MINUTE }, { name: 'skip' });
    await worker.schedulerTicker.runOnce();
    expect(await queue.getDelayedCount()).toBe(0);

    env.clock!.advance(MINUTE);
    await worker.schedulerTicker.runOnce();
    await until(async () => (await queue.getDelayedCount()) === 2, 'both schedulers to plan past the held runs');
    expect(ids(await queue.getWaiting())).toEqual([`sched:all:${T0}`, `sched:skip:${T0}`, `sched:all:${T0 + MINUTE}`]);
    expect(await queue.getJobSchedulerState('all')).toMatchObject({ fired: 2, skippedByOverlap: 0, missed: 0, next: T0 + 2 * MINUTE });
    expect(await queue.getJobSchedulerState('skip')).toMatchObject({ fired: 1, skippedByOverlap: 1, missed: 0, next: T0 + 2 * MINUTE });
    release.resolve();
  });

  it('re-created in a slot its removed namesake ran, a scheduler plans the next slot (an instant runs once)', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.upsertJobScheduler('poll', { every: MINUTE }, { name: 'poll' });
    const worker = env.worker(name, null);
    const taken = await worker.getNextJob('token-p');
    await taken!.moveToCompleted('ok', 'token-p');
    await queue.removeJobScheduler('poll');
    const pending = await queue.upsertJobScheduler('poll', { every: MINUTE }, { name: 'poll' });
    expect(pending?.id).toBe(`sched:poll:${T0 + MINUTE}`);
    expect(await queue.getJobState(pending!.id!)).toBe('delayed');
    expect(await queue.getJobState(`sched:poll:${T0}`)).toBe('completed');
    expect((await queue.getJobScheduler('poll'))?.next).toBe(T0 + MINUTE);
  });

  it('a due pending run its overlap policy skips is dropped, and the next one is planned at once', async () => {
    const queue = env.queue(env.queueName());
    await queue.upsertJobScheduler('s', { pattern: '0 3 * * *' }, { name: 's' });
    const run = await queue.triggerJobScheduler('s');
    // The every grid's current slot is due, but the triggered run has not finished: skipped.
    const pending = await queue.upsertJobScheduler('s', { every: MINUTE }, { name: 's' });
    expect(pending?.id).toBe(`sched:s:${T0 + MINUTE}`);
    expect(ids(await queue.getWaiting())).toEqual([run!.id]);
    expect(ids(await queue.getDelayed())).toEqual([`sched:s:${T0 + MINUTE}`]);
    expect(await queue.getJobSchedulerState('s')).toMatchObject({ skippedByOverlap: 1, next: T0 + MINUTE });
  });
});
