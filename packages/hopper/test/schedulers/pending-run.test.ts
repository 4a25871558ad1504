/**
 * A job scheduler's pending run (issue 12, defect 2): the delayed occurrence waiting for its time
 * is what keeps the scheduler going. Removing or cancelling it is refused with a
 * SchedulerJobError naming removeJobScheduler/pauseJobScheduler (as BullMQ refuses removing a
 * scheduler's delayed job); drain(true) and clean(…, 'delayed') skip it. Once it runs, it is an
 * ordinary job.
 */
import { describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backend/create.js';
import { ErrorCode, SchedulerJobError, type Job, type Queue } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';
import { once, signal, until } from '../helpers/wait.js';

const env = useHopper({ fakeClock: true });
const HOUR = 3600_000;
const T0 = Date.UTC(2026, 0, 1);
const NEXT = T0 + 3 * HOUR; // '0 3 * * *' from T0
const PENDING = `sched:nightly:${NEXT}`;

async function nightly(): Promise<{ name: string; queue: Queue }> {
  const name = env.queueName();
  const queue = env.queue(name);
  const pending = await queue.upsertJobScheduler('nightly', { pattern: '0 3 * * *' }, { name: 'report' });
  expect(pending?.id).toBe(PENDING);
  return { name, queue };
}

/** The scheduler still fires: its pending run runs at its time and the next one is planned. */
async function firesOnTime(name: string, queue: Queue): Promise<void> {
  const worker = env.worker(name, async () => 'ok');
  const completed = once<[Job]>(worker, 'completed');
  env.clock!.set(NEXT);
  expect((await completed)[0].id).toBe(PENDING);
  await until(async () => (await queue.getJobSchedulerState('nightly'))?.next === NEXT + 24 * HOUR, 'the next occurrence to be planned');
}

async function refused(promise: Promise<unknown>, action: 'removed' | 'cancelled'): Promise<void> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SchedulerJobError);
  expect(err).toMatchObject({ code: ErrorCode.SchedulerJob, jobId: PENDING, schedulerId: 'nightly' });
  expect((err as Error).message).toBe(
    `Job ${PENDING} belongs to a job scheduler and cannot be ${action} directly. ${action === 'removed' ? 'remove' : 'cancelJob'}: ` +
      `it is the pending run of job scheduler nightly; call queue.removeJobScheduler('nightly') to stop the schedule, ` +
      `or queue.pauseJobScheduler('nightly') to pause it.`,
  );
}

describe("a job scheduler's pending run", () => {
  it('queue.remove is refused with a SchedulerJobError; nothing changes and the scheduler fires', async () => {
    const { name, queue } = await nightly();
    await refused(queue.remove(PENDING), 'removed');
    expect(await queue.getJobState(PENDING)).toBe('delayed');
    await firesOnTime(name, queue);
  });

  it('job.remove() is refused with a SchedulerJobError', async () => {
    const { name, queue } = await nightly();
    const job = await queue.getJob(PENDING);
    await refused(job!.remove(), 'removed');
    expect(await queue.getJobState(PENDING)).toBe('delayed');
    await firesOnTime(name, queue);
  });

  it('cancelJob is refused with a SchedulerJobError', async () => {
    const { name, queue } = await nightly();
    await refused(queue.cancelJob(PENDING), 'cancelled');
    expect(await queue.getJobState(PENDING)).toBe('delayed');
    expect((await queue.getJob(PENDING))?.failedReason).toBeUndefined();
    await firesOnTime(name, queue);
  });

  it('drain(true) removes the other jobs and skips it', async () => {
    const { name, queue } = await nightly();
    await queue.add('early', {}, { delay: 1000 });
    await queue.add('late', {}, { delay: 5 * HOUR });
    await queue.add('now', {});
    await queue.drain(true);
    expect((await queue.getJobs(['delayed', 'waiting'])).map((j) => j.id)).toEqual([PENDING]);
    await firesOnTime(name, queue);
  });

  it('clean(0, 0, delayed) removes the other delayed jobs and skips it', async () => {
    const { name, queue } = await nightly();
    const other = await queue.add('other', {}, { delay: 1000 });
    expect(await queue.clean(0, 0, 'delayed')).toEqual([other.id]);
    expect((await queue.getJobs(['delayed'])).map((j) => j.id)).toEqual([PENDING]);
    await firesOnTime(name, queue);
  });

  it('drain walks past more pending runs than one batch holds', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    // Three schedulers' pending runs are due before the two other delayed jobs.
    for (const id of ['a', 'b', 'c']) await queue.upsertJobScheduler(id, { pattern: '0 3 * * *' }, { name: id });
    await queue.add('x', {}, { delay: 4 * HOUR });
    await queue.add('y', {}, { delay: 5 * HOUR });
    const backend = env.track(createBackend({ connection: env.url, prefix: env.prefix, queueName: name, role: 'command' }));
    expect((await backend.drain(true, 2, '')).removed).toBe(2);
    expect((await backend.drain(true, 2, '')).removed).toBe(0);
    expect((await queue.getJobs(['delayed'])).map((j) => j.id).sort()).toEqual(['a', 'b', 'c'].map((id) => `sched:${id}:${NEXT}`));
  });

  it('once it runs it is an ordinary job: cancelling it works', async () => {
    const { name, queue } = await nightly();
    const started = signal();
    const worker = env.worker(name, async (_job: Job, _token?: string, abort?: AbortSignal) => {
      started.resolve();
      await new Promise((_resolve, reject) => abort?.addEventListener('abort', () => reject(new Error('aborted'))));
    });
    const failed = once<[Job]>(worker, 'failed');
    env.clock!.set(NEXT);
    await started.promise;
    expect(await queue.cancelJob(PENDING)).toBe('signalled');
    // The worker learns it by pub/sub or, on the fake clock, at its next lock renewal.
    env.clock!.advance(30_000);
    expect((await failed)[0].id).toBe(PENDING);
    expect(await queue.getJobState(PENDING)).toBe('failed');
    await until(async () => (await queue.getJobSchedulerState('nightly'))?.next === NEXT + 24 * HOUR, 'the next occurrence to be planned');
  });

  it('a retry of an occurrence waiting for its backoff is an ordinary job: it can be removed', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.upsertJobScheduler(
      'nightly',
      { pattern: '0 3 * * *' },
      { name: 'report', opts: { attempts: 2, backoff: { type: 'fixed', delay: 60_000 } } },
    );
    const worker = env.worker(name, async () => {
      throw new Error('transient');
    });
    const failed = once<[Job]>(worker, 'failed');
    env.clock!.set(NEXT);
    expect((await failed)[0].id).toBe(PENDING);
    expect(await queue.getJobState(PENDING)).toBe('delayed');
    await until(async () => (await queue.getJobSchedulerState('nightly'))?.next === NEXT + 24 * HOUR, 'the next occurrence to be planned');
    expect(await queue.remove(PENDING)).toBe(1);
    // The scheduler's new pending run is refused as before.
    await expect(queue.remove(`sched:nightly:${NEXT + 24 * HOUR}`)).rejects.toBeInstanceOf(SchedulerJobError);
  });
});
