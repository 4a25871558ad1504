/**
 * Job schedulers end to end, on an injected clock: occurrences, idempotent upserts, overlap,
 * catch-up after downtime, pause/resume, trigger, backfill, limit, DST.
 */
import { describe, expect, it } from 'vitest';
import { InvalidScheduleError, type Job, type Worker } from '../../src/index.js';
import { collect, once, signal } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper({ fakeClock: true });
const MINUTE = 60_000;
const T0 = Date.UTC(2026, 0, 1); // the fake clock's start: on every minute grid

/** Advances the fake clock and waits until the worker has handled what fell due. */
async function tick(worker: Worker, ms: number, expectCompleted = 1): Promise<Job[]> {
  const done = expectCompleted > 0 ? collect<[Job]>(worker, 'completed', expectCompleted) : undefined;
  env.clock!.advance(ms);
  return done ? (await done).map(([job]) => job) : [];
}

/** Waits until the scheduler's counters satisfy `check` (advancing happens asynchronously after a claim). */
async function schedulerState(
  queueName: string,
  id: string,
  check: (s: { fired: number; skippedByOverlap: number; missed: number; next?: number }) => boolean,
) {
  const queue = env.queue(queueName);
  for (let i = 0; i < 200; i++) {
    const s = await queue.getJobSchedulerState(id);
    if (s && check(s)) return s;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`scheduler ${id} never reached the expected state: ${JSON.stringify(await queue.getJobSchedulerState(id))}`);
}

describe('job schedulers', () => {
  it('every: first occurrence due at once on the grid, then one per interval', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const first = await queue.upsertJobScheduler('poll', { every: MINUTE }, { name: 'poll', data: { feed: 'a' } });
    expect(first?.id).toBe(`sched:poll:${T0}`);
    const worker = env.worker(name, async (job) => job.data);
    const [run1] = await collect<[Job]>(worker, 'completed', 1);
    expect(run1[0].id).toBe(`sched:poll:${T0}`);
    expect(run1[0].name).toBe('poll');
    expect(run1[0].data).toEqual({ feed: 'a' });
    await schedulerState(name, 'poll', (s) => s.next === T0 + MINUTE);
    const [run2] = await tick(worker, MINUTE);
    expect(run2.id).toBe(`sched:poll:${T0 + MINUTE}`);
    await schedulerState(name, 'poll', (s) => s.next === T0 + 2 * MINUTE);
    const [run3] = await tick(worker, MINUTE);
    expect(run3.id).toBe(`sched:poll:${T0 + 2 * MINUTE}`);
    const info = await schedulerState(name, 'poll', (s) => s.next === T0 + 3 * MINUTE);
    expect(info).toMatchObject({ id: 'poll', every: MINUTE, fired: 3, missed: 0, skippedByOverlap: 0, created: 4 });
  });

  it("an occurrence's toJSON() and asJSON() carry its scheduler's id as repeatJobKey, as BullMQ's; a plain job's do not", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const pending = await queue.upsertJobScheduler('nightly', { pattern: '0 3 * * *' }, { name: 'report' });
    expect(pending!.toJSON().repeatJobKey).toBe('nightly');
    const reloaded = await queue.getJob(pending!.id!);
    expect(reloaded!.toJSON().repeatJobKey).toBe('nightly');
    expect(reloaded!.asJSON().repeatJobKey).toBe('nightly');
    const plain = await queue.add('plain', {});
    expect('repeatJobKey' in plain.toJSON()).toBe(false);
    expect('repeatJobKey' in plain.asJSON()).toBe(false);
  });

  it('upsert is idempotent: same spec keeps the pending occurrence; a changed one replaces it', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const a = await queue.upsertJobScheduler('report', { pattern: '0 3 * * *' }, { name: 'report' });
    const b = await queue.upsertJobScheduler('report', { pattern: '0 3 * * *' }, { name: 'report' });
    expect(b?.id).toBe(a?.id);
    expect(await queue.getDelayedCount()).toBe(1);
    const c = await queue.upsertJobScheduler('report', { pattern: '0 4 * * *' }, { name: 'report' });
    expect(c?.id).toBe(`sched:report:${T0 + 4 * 3600_000}`);
    expect((await queue.getDelayed()).map((j) => j.id)).toEqual([c?.id]);
    expect(await queue.getJobSchedulersCount()).toBe(1);
  });

  it('concurrent upserts from many clients create each occurrence once', async () => {
    const name = env.queueName();
    const queues = Array.from({ length: 5 }, () => env.queue(name));
    const worker = env.worker(name, async () => 'ok');
    const seen: string[] = [];
    worker.on('completed', (job: Job) => seen.push(job.id as string));
    for (let t = 0; t < 10; t++) {
      const done = once(worker, 'completed');
      await Promise.all(queues.map((q) => q.upsertJobScheduler('shared', { every: MINUTE }, { name: 'tick' })));
      await done;
      await schedulerState(name, 'shared', (s) => s.next === T0 + (t + 1) * MINUTE);
      env.clock!.advance(MINUTE);
    }
    await once(worker, 'completed');
    expect(seen).toEqual(Array.from({ length: 11 }, (_, i) => `sched:shared:${T0 + i * MINUTE}`));
  });

  it('overlap skip: an occurrence due while the previous run is unfinished is skipped and counted', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.upsertJobScheduler('slow', { every: MINUTE, overlap: 'skip' }, { name: 'slow' });
    const release = signal();
    let runs = 0;
    const worker = env.worker(name, async () => {
      runs++;
      if (runs === 1) await release.promise;
    });
    await once(worker, 'active');
    await schedulerState(name, 'slow', (s) => s.next === T0 + MINUTE);
    env.clock!.advance(MINUTE);
    await schedulerState(name, 'slow', (s) => s.skippedByOverlap === 1 && s.next === T0 + 2 * MINUTE);
    release.resolve();
    await once(worker, 'completed');
    const [next] = await tick(worker, MINUTE);
    expect(next.id).toBe(`sched:slow:${T0 + 2 * MINUTE}`);
    expect(runs).toBe(2);
  });

  it('overlap bufferOne keeps one occurrence waiting behind the running one; allowAll runs all', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.upsertJobScheduler('buf', { every: MINUTE, overlap: 'bufferOne' }, { name: 'buf' });
    await queue.upsertJobScheduler('all', { every: MINUTE, overlap: 'allowAll' }, { name: 'all' });
    const release = signal();
    const started: string[] = [];
    const worker = env.worker(
      name,
      async (job) => {
        started.push(job.id as string);
        await release.promise;
      },
      { concurrency: 1 },
    );
    await once(worker, 'active');
    for (let i = 1; i <= 2; i++) {
      env.clock!.advance(MINUTE);
      await schedulerState(name, 'buf', (s) => s.next === T0 + (i + 1) * MINUTE);
      await schedulerState(name, 'all', (s) => s.next === T0 + (i + 1) * MINUTE);
    }
    const buf = await queue.getJobSchedulerState('buf');
    const all = await queue.getJobSchedulerState('all');
    // buf: run 0 active or waiting, run 1 buffered, run 2 skipped. all: runs 0, 1, 2 all kept.
    expect(buf?.skippedByOverlap).toBe(1);
    expect(all?.skippedByOverlap).toBe(0);
    expect(buf?.fired).toBe(2);
    expect(all?.fired).toBe(3);
    release.resolve();
    await collect(worker, 'completed', 5);
  });

  it('catch-up latest: after downtime runs the most recent missed occurrence in the window, counts the rest', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.upsertJobScheduler('c', { every: MINUTE, catchup: 'latest', catchupWindow: 5 * MINUTE }, { name: 'c' });
    const first = env.worker(name, async () => 'ok');
    await once(first, 'completed');
    await schedulerState(name, 'c', (s) => s.next === T0 + MINUTE);
    await first.close();
    // Down for 10 minutes: occurrences at +1..+10 min were never run.
    env.clock!.advance(10 * MINUTE + 30_000);
    const worker = env.worker(name, async () => 'ok');
    const [job] = await collect<[Job]>(worker, 'completed', 1);
    expect(job[0].id).toBe(`sched:c:${T0 + 10 * MINUTE}`);
    const s = await schedulerState(name, 'c', (x) => x.next === T0 + 11 * MINUTE);
    // +1 (the pending one, too old) and +2..+9 are missed; +10 ran.
    expect(s.missed).toBe(9);
    expect(s.fired).toBe(2);
  });

  it('catch-up all runs every missed occurrence within the window; none runs nothing', async () => {
    for (const [policy, expected] of [
      ['all', 5],
      ['none', 0],
    ] as const) {
      env.clock!.set(Math.ceil(env.clock!.now() / MINUTE) * MINUTE);
      const name = env.queueName();
      const queue = env.queue(name);
      const start = env.clock!.now();
      await queue.upsertJobScheduler(
        'c',
        { every: MINUTE, catchup: policy, catchupWindow: 5 * MINUTE, overlap: 'allowAll' },
        { name: 'c' },
      );
      const first = env.worker(name, async () => 'ok');
      await once(first, 'completed');
      await first.close();
      env.clock!.advance(10 * MINUTE + 30_000);
      const worker = env.worker(name, async () => 'ok');
      const ran: string[] = [];
      worker.on('completed', (job: Job) => ran.push(job.id as string));
      const s = await schedulerState(name, 'c', (x) => x.next !== undefined && x.next > env.clock!.now());
      // The runs may all have completed already (a fast backend): wait only for those still to come.
      if (expected > ran.length) await collect(worker, 'completed', expected - ran.length);
      const slot = Math.floor(start / MINUTE) * MINUTE;
      expect(ran.sort()).toEqual(Array.from({ length: expected }, (_, i) => `sched:c:${slot + (6 + i) * MINUTE}`).sort());
      expect(s.missed).toBe(10 - expected);
      await worker.close();
    }
  });

  it('pause removes the pending occurrence; resume follows the catch-up policy', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.upsertJobScheduler('p', { every: MINUTE, catchup: 'none' }, { name: 'p' });
    const worker = env.worker(name, async () => 'ok');
    await once(worker, 'completed');
    await schedulerState(name, 'p', (s) => s.next === T0 + MINUTE);
    expect(await queue.pauseJobScheduler('p')).toBe(true);
    expect(await queue.getDelayedCount()).toBe(0);
    expect((await queue.getJobSchedulerState('p'))?.paused).toBe(true);
    env.clock!.advance(3 * MINUTE + 10_000);
    expect(await queue.resumeJobScheduler('p')).toBe(true);
    const s = await queue.getJobSchedulerState('p');
    expect(s).toMatchObject({ paused: false, next: T0 + 4 * MINUTE, missed: 3 });
  });

  it('trigger runs once now; backfill runs past occurrences once, never one that already ran', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.upsertJobScheduler('b', { every: MINUTE }, { name: 'b' });
    const worker = env.worker(name, async () => 'ok');
    await once(worker, 'completed'); // T0 ran
    await schedulerState(name, 'b', (s) => s.next === T0 + MINUTE);
    // Each wait starts before the call whose job it waits for: the job may complete at once.
    const triggerDone = once(worker, 'completed');
    const triggered = await queue.triggerJobScheduler('b');
    expect(triggered?.id).toBe(`sched:b:trigger:${T0}`);
    await triggerDone;
    const backfillDone = collect(worker, 'completed', 3);
    const created = await queue.backfillJobScheduler('b', T0 - 3 * MINUTE, T0 + 30 * MINUTE);
    // T0 ran already; the future is left to the schedule.
    expect(created).toEqual([`sched:b:${T0 - 3 * MINUTE}`, `sched:b:${T0 - 2 * MINUTE}`, `sched:b:${T0 - MINUTE}`]);
    await backfillDone;
    expect(await queue.backfillJobScheduler('b', T0 - 3 * MINUTE, T0)).toEqual([]);
  });

  it('limit caps the occurrences created', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.upsertJobScheduler('l', { every: MINUTE, limit: 2 }, { name: 'l' });
    const worker = env.worker(name, async () => 'ok');
    await once(worker, 'completed');
    await tick(worker, MINUTE);
    env.clock!.advance(MINUTE);
    const s = await schedulerState(name, 'l', (x) => x.fired === 2);
    expect(s).toMatchObject({ created: 2, next: undefined });
    expect(await queue.getDelayedCount()).toBe(0);
  });

  it('removes a scheduler and its pending occurrence', async () => {
    const queue = env.queue(env.queueName());
    await queue.upsertJobScheduler('r', { pattern: '*/5 * * * *' }, { name: 'r' });
    expect(await queue.getDelayedCount()).toBe(1);
    expect(await queue.removeJobScheduler('r')).toBe(true);
    expect(await queue.removeJobScheduler('r')).toBe(false);
    expect(await queue.getDelayedCount()).toBe(0);
    expect(await queue.getJobSchedulers()).toEqual([]);
  });

  it('fires across a DST change as Vixie cron does (Europe/Paris spring forward), end to end', async () => {
    env.clock!.set(Date.parse('2026-03-27T12:00:00Z'));
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.upsertJobScheduler('dst', { pattern: '30 2 * * *', tz: 'Europe/Paris' }, { name: 'dst' });
    const worker = env.worker(name, async () => 'ok');
    const expected = ['2026-03-28T01:30:00Z', '2026-03-29T01:00:00Z', '2026-03-30T00:30:00Z'].map(Date.parse);
    for (const at of expected) {
      await schedulerState(name, 'dst', (s) => s.next === at);
      const [job] = await tick(worker, at - env.clock!.now());
      expect(job.id).toBe(`sched:dst:${at}`);
    }
  });

  it('applies deterministic jitter within [0, jitter)', async () => {
    const queue = env.queue(env.queueName());
    await queue.upsertJobScheduler('j', { every: 10 * MINUTE, jitter: MINUTE }, { name: 'j' });
    const s = await queue.getJobSchedulerState('j');
    expect(s!.next! - T0).toBeGreaterThanOrEqual(0);
    expect(s!.next! - T0).toBeLessThan(MINUTE);
    const again = await queue.getJobSchedulerState('j');
    expect(again?.next).toBe(s?.next);
  });

  it('refuses invalid schedules and templates before writing anything', async () => {
    const queue = env.queue(env.queueName());
    await expect(queue.upsertJobScheduler('x', { pattern: '0 0 31 2 *' })).rejects.toBeInstanceOf(InvalidScheduleError);
    await expect(queue.upsertJobScheduler('x', { pattern: '*/0 * * * *' })).rejects.toBeInstanceOf(InvalidScheduleError);
    await expect(queue.upsertJobScheduler('x', { pattern: '0 0 * * *', tz: 'Mars/Olympus' })).rejects.toBeInstanceOf(InvalidScheduleError);
    await expect(queue.upsertJobScheduler('x', { every: 0 })).rejects.toBeInstanceOf(InvalidScheduleError);
    await expect(queue.upsertJobScheduler('x', { every: 1000 }, { opts: { jobId: 'nope' } as never })).rejects.toThrow(/cannot set jobId/);
    expect(await queue.getJobSchedulersCount()).toBe(0);
  });
});
