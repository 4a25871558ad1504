/**
 * BullMQ 4/5's legacy repeatable jobs (`queue.add(name, data, { repeat })`), built on job
 * schedulers, on an injected clock: the repeat key, the first occurrence, idempotent re-adds,
 * getRepeatableJobs / removeRepeatable / removeRepeatableByKey, the occurrences' opts.repeat,
 * prevMillis and repeatJobKey, count and limit, immediately, and what is refused.
 */
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError, InvalidScheduleError, type Job } from '../../src/index.js';
import { collect } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper({ fakeClock: true });
const MINUTE = 60_000;
const T0 = Date.UTC(2026, 0, 1); // the fake clock's start: on every minute grid

describe('legacy repeatable jobs (add with repeat)', () => {
  it('creates a scheduler named by the repeat key and returns its first occurrence', async () => {
    const queue = env.queue(env.queueName());
    const job = await queue.add('bird', { color: 'green' }, { repeat: { every: MINUTE, limit: 100 }, attempts: 2 });
    expect(job.id).toBe(`sched:bird::::${MINUTE}:${T0}`);
    expect(job.repeatJobKey).toBe(`bird::::${MINUTE}`);
    expect(job.data).toEqual({ color: 'green' });
    expect(job.opts).toMatchObject({ repeat: { every: MINUTE, limit: 100, count: 1 }, prevMillis: T0, attempts: 2 });
    expect(job.opts.repeatJobKey).toBe(`bird::::${MINUTE}`);
    expect(await queue.getJobSchedulersCount()).toBe(1);

    const end = T0 + 86_400_000;
    const cron = await queue.add('paint', {}, { repeat: { pattern: '0 15 3 * * *', tz: 'Europe/Paris', endDate: end }, jobId: 'colibri' });
    const key = `paint:colibri:${end}:Europe/Paris:0 15 3 * * *`;
    expect(cron.repeatJobKey).toBe(key);
    expect(cron.opts.repeat).toMatchObject({ pattern: '0 15 3 * * *', tz: 'Europe/Paris', endDate: end, jobId: 'colibri', count: 1 });
    expect(await queue.getJobState(cron.id as string)).toBe('delayed');

    const repeatables = await queue.getRepeatableJobs(0, -1, true);
    expect(repeatables).toEqual([
      { key: `bird::::${MINUTE}`, name: 'bird', id: null, endDate: null, tz: null, pattern: null, every: String(MINUTE), next: T0 },
      {
        key,
        name: 'paint',
        id: 'colibri',
        endDate: end,
        tz: 'Europe/Paris',
        pattern: '0 15 3 * * *',
        every: null,
        next: cron.opts.prevMillis,
      },
    ]);
    expect(await queue.getRepeatableCount()).toBe(2);
  });

  it('a second add with the same options changes nothing; repeat.key names the scheduler and updates it', async () => {
    const queue = env.queue(env.queueName());
    const a = await queue.add('red', { n: 1 }, { repeat: { pattern: '*/5 * * * *' } });
    const b = await queue.add('red', { n: 1 }, { repeat: { pattern: '*/5 * * * *' } });
    expect(b.id).toBe(a.id);
    expect(await queue.getDelayedCount()).toBe(1);

    await queue.add('bird', {}, { repeat: { every: 10_000, key: 'eagle' } });
    const updated = await queue.add('bird', { color: 'turquoise' }, { repeat: { every: 25_000, key: 'eagle' } });
    expect(updated.repeatJobKey).toBe('eagle');
    expect(updated.opts.repeat).toMatchObject({ every: 25_000, key: 'eagle' });
    expect((await queue.getJobSchedulerState('eagle'))?.every).toBe(25_000);
    expect(await queue.getRepeatableCount()).toBe(2);
  });

  it('BullMQ 5 cases: same pattern under different names makes three schedules; same key at once makes one', async () => {
    const queue = env.queue(env.queueName());
    const cron = '*/10 * * * * *';
    await Promise.all(['test1', 'test2', 'test3'].map((name) => queue.add(name, {}, { repeat: { pattern: cron } })));
    expect(await queue.count()).toBe(3);
    await Promise.all([1000, 2000, 3000].map((every, i) => queue.add(`k${i}`, {}, { repeat: { every, key: 'test' } })));
    const keyed = (await queue.getRepeatableJobs()).filter((r) => r.key === 'test');
    expect(keyed).toHaveLength(1);
    // One pending run for the key, whichever add came last.
    expect((await queue.getJobs(['waiting', 'delayed'])).filter((job) => job.repeatJobKey === 'test')).toHaveLength(1);
  });

  it('removeRepeatable and removeRepeatableByKey remove the scheduler and its pending occurrence', async () => {
    const queue = env.queue(env.queueName());
    const repeat = { pattern: '*/1 * * * * *' };
    const red = await queue.add('red', { foo: 'bar' }, { repeat });
    await queue.add('blue', { foo: 'baz' }, { repeat });
    await queue.add('green', {}, { repeat, jobId: 'custom' });
    expect(await queue.getDelayedCount()).toBe(3);

    expect(await queue.removeRepeatableByKey(red.repeatJobKey as string)).toBe(true);
    expect(await queue.removeRepeatable('blue', repeat)).toBe(true);
    expect(await queue.removeRepeatable('blue', repeat)).toBe(false);
    expect(await queue.removeRepeatable('green', repeat)).toBe(false); // the key holds the jobId
    expect(await queue.removeRepeatable('green', repeat, 'custom')).toBe(true);
    expect(await queue.getRepeatableJobs()).toEqual([]);
    expect(await queue.getDelayedCount()).toBe(0);
    expect(await queue.removeRepeatableByKey('nothing')).toBe(false);
  });

  it('occurrences carry opts.repeat with their count, prevMillis and repeatJobKey; count and limit as in BullMQ', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    // Starts after iteration 2: the occurrences are iterations 3 and 4 (limit 4), then it stops.
    await queue.add('tick', {}, { repeat: { every: MINUTE, count: 2, limit: 4 } });
    const worker = env.worker(name, async () => 'ok');
    const [[first]] = await collect<[Job]>(worker, 'completed', 1);
    expect(first.opts.repeat).toMatchObject({ every: MINUTE, limit: 4, count: 3 });
    expect(first.opts.prevMillis).toBe(T0);
    expect(first.repeatJobKey).toBe(`tick::::${MINUTE}`);
    const second = collect<[Job]>(worker, 'completed', 1);
    await waitForNext(queue, `tick::::${MINUTE}`, T0 + MINUTE);
    env.clock!.advance(MINUTE);
    const [[run]] = await second;
    expect(run.opts.repeat?.count).toBe(4);
    expect(run.opts.prevMillis).toBe(T0 + MINUTE);
    const info = await waitForNext(queue, `tick::::${MINUTE}`, undefined);
    expect(info.created).toBe(2);
  });

  it('upsertJobScheduler occurrences carry opts.repeat too', async () => {
    const queue = env.queue(env.queueName());
    const job = await queue.upsertJobScheduler('poll', { every: 1000, startDate: T0 }, { data: { foo: 'bar' } });
    expect(job?.opts.repeat).toEqual({ every: 1000, startDate: T0, count: 1 });
    expect(job?.opts.prevMillis).toBe(T0);
    expect(job?.repeatJobKey).toBe('poll');
    expect(job?.opts.delay).toBe(0);
    expect(job?.data).toEqual({ foo: 'bar' });
    const cron = await queue.upsertJobScheduler('nightly', { pattern: '0 3 * * *' });
    expect(cron?.opts.delay).toBe(3 * 3600_000);
    expect(cron?.opts.repeat).toEqual({ pattern: '0 3 * * *', count: 1 });
  });

  it('upsertJobScheduler honours immediately for a new cron scheduler, as BullMQ does', async () => {
    const queue = env.queue(env.queueName());
    const job = await queue.upsertJobScheduler('report', { pattern: '0 3 * * *', immediately: true }, { name: 'report' });
    expect(job?.id).toBe(`sched:report:trigger:${T0}`);
    expect(await queue.getWaitingCount()).toBe(1);
    expect(await queue.getDelayedCount()).toBe(1);
    // Not part of the schedule: the same upsert again changes nothing and runs nothing more.
    await queue.upsertJobScheduler('report', { pattern: '0 3 * * *', immediately: true }, { name: 'report' });
    await queue.upsertJobScheduler('report', { pattern: '0 3 * * *' }, { name: 'report' });
    expect(await queue.getWaitingCount()).toBe(1);
    expect(await queue.getDelayedCount()).toBe(1);
    await expect(queue.upsertJobScheduler('x', { pattern: '0 3 * * *', immediately: 'yes' } as object)).rejects.toBeInstanceOf(
      InvalidScheduleError,
    );
  });

  it('immediately runs a new cron schedule once now, and only when it is created', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const now = await queue.add('report', {}, { repeat: { pattern: '0 3 * * *', immediately: true } });
    expect(now.id).toBe(`sched:report::::0 3 * * *:trigger:${T0}`);
    expect(await queue.getJobState(now.id as string)).toBe('waiting');
    const again = await queue.add('report', {}, { repeat: { pattern: '0 3 * * *', immediately: true } });
    expect(again.id).toBe(`sched:report::::0 3 * * *:${T0 + 3 * 3600_000}`);
    expect(await queue.getWaitingCount()).toBe(1);
  });

  it('refuses bad legacy options before writing anything', async () => {
    const queue = env.queue(env.queueName());
    await expect(queue.add('x', {}, { repeat: { every: 100, endDate: T0 - 1000 } })).rejects.toThrow(
      'End date must be greater than current timestamp',
    );
    await expect(queue.add('x', {}, { repeat: { pattern: '* * * * *', immediately: true, startDate: T0 } })).rejects.toThrow(
      'Both .immediately and .startDate options are defined',
    );
    await expect(queue.add('x', {}, { repeat: { every: 100, count: 5, limit: 5 } })).rejects.toBeInstanceOf(InvalidScheduleError);
    await expect(queue.add('x', {}, { repeat: { every: 100, count: -1 } })).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(queue.add('x', {}, { repeat: { every: 100, pattern: '* * * * *' } })).rejects.toBeInstanceOf(InvalidScheduleError);
    await expect(queue.add('x', {}, { repeat: { every: 100, key: '' } })).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(queue.add('x', {}, { repeat: { every: 100 }, jobId: 'j'.repeat(250) })).rejects.toThrow(/shorter repeat\.key/);
    // repeat is queue.add's alone: addBulk, flows and templates refuse it with a clear error.
    await expect(queue.addBulk([{ name: 'x', data: {}, opts: { repeat: { every: 100 } } }])).rejects.toThrow(/queue\.add only/);
    const flows = env.flows();
    await flows.waitUntilReady();
    await expect(flows.add({ name: 'x', queueName: queue.name, data: {}, opts: { repeat: { every: 100 } } })).rejects.toThrow(
      /queue\.add only/,
    );
    await expect(queue.upsertJobScheduler('s', { every: 100 }, { opts: { repeat: { every: 100 } } })).rejects.toThrow(/queue\.add only/);
    expect(await queue.getRepeatableCount()).toBe(0);
    expect(await queue.getJobCounts()).toMatchObject({ waiting: 0, delayed: 0 });
  });
});

/** Waits until scheduler `id` has its pending occurrence due at `next` (undefined: none left). */
async function waitForNext(queue: ReturnType<typeof env.queue>, id: string, next: number | undefined) {
  for (let i = 0; i < 200; i++) {
    const s = await queue.getJobSchedulerState(id);
    if (s && s.next === next) return s;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`scheduler ${id} never had next = ${String(next)}: ${JSON.stringify(await queue.getJobSchedulerState(id))}`);
}
