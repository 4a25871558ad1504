/**
 * Occurrence ids in BullMQ's form. Hopper's occurrences are `sched:<schedulerId>:<instant>`;
 * BullMQ's are `repeat:<schedulerId>:<instant>`, and `hopper migrate` keeps a moved pending run's
 * id, so a queue may hold such a pending run. It runs once, at its time, and the scheduler
 * advances to a `sched:` run; removing it is still refused, naming its scheduler. The state is
 * written directly in the store (a Redis hash renamed, or a SQLite row), as it would be left.
 */
import { describe, expect, it } from 'vitest';
import { SchedulerJobError, type Job, type Queue } from '../../src/index.js';
import { renamePendingRun } from '../helpers/earlier-version.js';
import { useHopper } from '../helpers/hopper.js';
import { once, until } from '../helpers/wait.js';

const env = useHopper({ fakeClock: true, processes: true });
const HOUR = 3600_000;
const T0 = Date.UTC(2026, 0, 1);
const NEXT = T0 + 3 * HOUR; // '0 3 * * *' from T0
const EARLIER = `repeat:nightly:${NEXT}`;

/** A queue whose scheduler `nightly` has the pending run `repeat:nightly:<NEXT>` moved from BullMQ. */
async function earlierQueue(): Promise<{ name: string; queue: Queue }> {
  const name = env.queueName();
  const queue = env.queue(name);
  const pending = await queue.upsertJobScheduler('nightly', { pattern: '0 3 * * *' }, { name: 'report' });
  expect(pending?.id).toBe(`sched:nightly:${NEXT}`);
  await renamePendingRun(env.url, env.prefix, name, 'nightly', `sched:nightly:${NEXT}`, EARLIER);
  expect(await queue.getJobState(EARLIER)).toBe('delayed');
  expect(await queue.getJobState(`sched:nightly:${NEXT}`)).toBe('unknown');
  return { name, queue };
}

describe("a pending run with BullMQ's id (repeat:), as hopper migrate moves it", () => {
  it('runs once at its time, and the scheduler advances to a sched: run', async () => {
    const { name, queue } = await earlierQueue();
    const ran: string[] = [];
    const worker = env.worker(name, async (job) => {
      ran.push(job.id!);
      return 'ok';
    });
    const completed = once<[Job]>(worker, 'completed');
    env.clock!.set(NEXT);
    expect((await completed)[0].id).toBe(EARLIER);
    const after = NEXT + 24 * HOUR;
    await until(async () => (await queue.getJobSchedulerState('nightly'))?.next === after, 'the next occurrence to be planned');
    expect((await queue.getJobs(['delayed'])).map((j) => j.id)).toEqual([`sched:nightly:${after}`]);
    // The instant ran once: no sched: twin of it was created.
    expect(await queue.getJobState(`sched:nightly:${NEXT}`)).toBe('unknown');
    expect(ran).toEqual([EARLIER]);

    const next = once<[Job]>(worker, 'completed');
    env.clock!.set(after);
    expect((await next)[0].id).toBe(`sched:nightly:${after}`);
    expect(ran).toEqual([EARLIER, `sched:nightly:${after}`]);
  });

  it('removing it is refused, naming its scheduler; removing the scheduler withdraws it', async () => {
    const { queue } = await earlierQueue();
    const err = await queue.remove(EARLIER).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SchedulerJobError);
    expect(err).toMatchObject({ jobId: EARLIER, schedulerId: 'nightly' });
    expect(await queue.getJobState(EARLIER)).toBe('delayed');
    expect(await queue.removeJobScheduler('nightly')).toBe(true);
    expect(await queue.getJobState(EARLIER)).toBe('unknown');
  });
});
