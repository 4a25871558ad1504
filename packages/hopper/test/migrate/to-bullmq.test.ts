/**
 * hopper migrate --to-bullmq, the way back: a Hopper queue's waiting (order kept), prioritized,
 * delayed (due time kept), failed (retryable) and completed jobs and its job schedulers written in
 * BullMQ 6's and 5's layouts, then run by the real bullmq package's workers exactly once;
 * Hopper-only state listed by the dry run, refused by a run, dropped on request.
 */
import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { useHopper } from '../helpers/hopper.js';
import { migrateToBullMQ, summaryLine, isComplete, MigrationError } from '../../src/migrate/index.js';
import { loadBull, type BullModule, useBullPrefixes } from './bullmq-deployment.js';

const env = useHopper();
const newBullPrefix = useBullPrefixes(env);

interface BullJobView {
  id?: string;
  name: string;
  data: unknown;
  opts: Record<string, unknown>;
  attemptsMade: number;
  failedReason?: string;
  returnvalue?: unknown;
  progress?: unknown;
  getState(): Promise<string>;
  retry(): Promise<void>;
  promote(): Promise<void>;
}
type BullQueueView = {
  getJob(id: string): Promise<BullJobView | undefined>;
  getJobLogs(id: string): Promise<{ logs: string[] }>;
  getJobCounts(...states: string[]): Promise<Record<string, number>>;
  getJobScheduler(id: string): Promise<Record<string, unknown> | undefined>;
  close(): Promise<void>;
};

/** Runs BullMQ workers on the queue until `expected` jobs ran; returns how often each id ran. */
async function runWithBullMQ(bull: BullModule, url: string, prefix: string, name: string, expected: number): Promise<Map<string, number>> {
  const runs = new Map<string, number>();
  let total = 0;
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const worker = new bull.Worker(
    name,
    async (job: { id: string; name: string }) => {
      runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
      total++;
      if (total === expected) done();
      return { ran: job.id };
    },
    { connection: { url, maxRetriesPerRequest: null }, prefix, concurrency: 5 },
  );
  const errors: unknown[] = [];
  worker.on('error', (err) => errors.push(err));
  try {
    await finished;
  } finally {
    await worker.close();
  }
  expect(errors).toEqual([]);
  return runs;
}

describe.each(['6', '5'] as const)('to BullMQ %s', (version) => {
  it('moves every state with its ids, order and record; BullMQ workers run each job once', async () => {
    const bull = await loadBull(Number(version) as 5 | 6);
    const bp = newBullPrefix();
    const name = env.queueName('back');
    const queue = env.queue(name);
    // Failed and completed history first, through a Hopper worker.
    await queue.add('will-fail', { f: 1 }, { jobId: 'f1', attempts: 1 });
    await queue.add('will-complete', { c: 1 }, { jobId: 'c1' });
    let n = 0;
    let resolveSettled: () => void = () => undefined;
    const settled = new Promise<void>((resolve) => (resolveSettled = resolve));
    const hopperWorker = env.worker(name, async (job) => {
      await job.log(`line of ${job.id}`);
      await job.updateProgress(42);
      if (job.id === 'f1') throw new Error('boom f1');
      return { done: job.id };
    });
    hopperWorker.on('completed', () => ++n === 2 && resolveSettled());
    hopperWorker.on('failed', () => ++n === 2 && resolveSettled());
    await settled;
    // The Hopper workers stop before the move (as the switch asks).
    await hopperWorker.close();
    const waiting = Array.from({ length: 30 }, (_, i) => `w${i}`);
    await queue.addBulk(waiting.map((id, i) => ({ name: 'plain', data: { i }, opts: { jobId: id, attempts: 3 } })));
    for (let i = 0; i < 6; i++) await queue.add('urgent', { i }, { jobId: `p${i}`, priority: 1 + (i % 3) });
    const now = Date.now();
    const delayed = Array.from({ length: 5 }, (_, i) => ({ id: `d${i}`, delay: 3_600_000 + i * 60_000 }));
    for (const d of delayed) await queue.add('later', { d: d.id }, { jobId: d.id, delay: d.delay });
    await queue.add('dedup', { x: 1 }, { jobId: 'dd1', deduplication: { id: 'dk1', ttl: 600_000 }, delay: 7_200_000 });
    const dry = await migrateToBullMQ({
      from: env.url,
      queue: name,
      prefix: bp,
      hopperPrefix: env.prefix,
      dryRun: true,
      withHistory: true,
    });
    expect(dry.moved).toMatchObject({ waiting: 30, prioritized: 6, delayed: 6, failed: 1, completed: 1 });
    expect(dry.hopperOnly?.found).toEqual({});

    const report = await migrateToBullMQ({
      from: env.url,
      queue: name,
      prefix: bp,
      hopperPrefix: env.prefix,
      withHistory: true,
      bullmqVersion: version,
    });
    expect(report.direction).toBe('to-bullmq');
    expect(report.layout.version).toBe(Number(version));
    expect(report.lost).toBe(0);
    expect(report.countsMatch).toBe(true);
    expect(isComplete(report)).toBe(true);
    expect(report.moved).toMatchObject({ waiting: 30, prioritized: 6, delayed: 6, failed: 1, completed: 1 });
    expect(summaryLine(report)).toBe(
      'migrated 44 jobs (30 waiting, 6 prioritized, 6 delayed, 1 failed, 1 completed), 0 schedulers; lost 0',
    );
    expect(report.counts.destinationAfter).toMatchObject({ waiting: 30, prioritized: 6, delayed: 6, failed: 1, completed: 1 });
    // Hopper is empty.
    expect(await queue.getJobCounts('waiting', 'prioritized', 'delayed', 'failed', 'completed')).toEqual({
      waiting: 0,
      prioritized: 0,
      delayed: 0,
      failed: 0,
      completed: 0,
    });

    const r = new Redis(env.url);
    const bq = new bull.Queue(name, { connection: { url: env.url }, prefix: bp }) as unknown as BullQueueView;
    try {
      expect(await r.hget(`${bp}:${name}:meta`, 'version')).toMatch(new RegExp(`^bullmq:${version}\\.`));
      // Waiting order kept: BullMQ runs the list's tail first.
      expect((await r.lrange(`${bp}:${name}:wait`, 0, -1)).reverse()).toEqual(waiting);
      // Delayed due times kept (BullMQ's score: due * 4096 + an order).
      for (const d of delayed) {
        const score = Number(await r.zscore(`${bp}:${name}:delayed`, d.id));
        expect(Math.abs(Math.floor(score / 4096) - (now + d.delay))).toBeLessThan(5_000);
        expect(await (await bq.getJob(d.id))!.getState()).toBe('delayed');
      }
      const dd = await bq.getJob('dd1');
      expect(dd!.opts.deduplication).toMatchObject({ id: 'dk1' });
      expect(await r.get(`${bp}:${name}:de:dk1`)).toBe('dd1');
      const p0 = await bq.getJob('p0');
      expect(await p0!.getState()).toBe('prioritized');
      expect(p0!.opts.priority).toBe(1);
      const w0 = await bq.getJob('w0');
      expect(w0!.data).toEqual({ i: 0 });
      expect(w0!.opts.attempts).toBe(3);
      // Failed: reason, attempts, logs; retry works.
      const f1 = await bq.getJob('f1');
      expect(await f1!.getState()).toBe('failed');
      expect(f1!.failedReason).toBe('boom f1');
      expect(f1!.attemptsMade).toBe(1);
      expect((await bq.getJobLogs('f1')).logs).toEqual(['line of f1']);
      expect(f1!.progress).toBe(42);
      // Completed history keeps its return value.
      const c1 = await bq.getJob('c1');
      expect(await c1!.getState()).toBe('completed');
      expect(c1!.returnvalue).toEqual({ done: 'c1' });
      await f1!.retry();
      expect(await f1!.getState()).toBe('waiting');
      for (const d of [...delayed.map((x) => x.id), 'dd1']) await (await bq.getJob(d))!.promote();
    } finally {
      await bq.close();
      r.disconnect();
    }
    const expected = 30 + 6 + 6 + 1;
    const runs = await runWithBullMQ(bull, env.url, bp, name, expected);
    expect(runs.size).toBe(expected);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    expect(runs.has('f1')).toBe(true);
  });
});

describe('Hopper-only state', () => {
  it('is listed by the dry run, refused by a run (nothing moved), dropped on request', async () => {
    const bull = await loadBull(6);
    const bp = newBullPrefix();
    const name = env.queueName('only');
    const queue = env.queue(name);
    await queue.add('grouped', { g: 1 }, { jobId: 'g1', group: { id: 'tenant-a' } });
    await queue.add('timed', { t: 1 }, { jobId: 't1', timeout: 5_000 });
    await queue.add('plain', { p: 1 }, { jobId: 'n1' });
    const opts = { from: env.url, queue: name, prefix: bp, hopperPrefix: env.prefix };
    const dry = await migrateToBullMQ({ ...opts, dryRun: true });
    expect(dry.hopperOnly?.found).toMatchObject({ groups: 1, timeouts: 1 }); // the one grouped job (its group is not counted again)
    const err = await migrateToBullMQ(opts).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MigrationError);
    expect((err as MigrationError).reason).toBe('hopper-only-state');
    expect((err as Error).message).toMatch(/jobs in groups .*e\.g\. g1/);
    expect((err as Error).message).toMatch(/jobs with a timeout option .*e\.g\. t1/);
    expect((err as Error).message).toMatch(/Nothing was moved\. Run again with --drop-hopper-only/);
    // Nothing moved: Hopper still holds all three, BullMQ none.
    expect(await queue.getJobState('n1')).toBe('waiting');
    expect(await queue.getJobState('g1')).toBe('waiting');
    const r = new Redis(env.url);
    try {
      expect(await r.exists(`${bp}:${name}:n1`, `${bp}:${name}:wait`)).toBe(0);
    } finally {
      r.disconnect();
    }

    const report = await migrateToBullMQ({ ...opts, dropHopperOnly: true });
    expect(report.lost).toBe(0);
    expect(report.countsMatch).toBe(true);
    expect(report.moved.waiting).toBe(3);
    expect(report.hopperOnly?.dropped).toMatchObject({ groups: 1, timeouts: 1 });
    const bq = new bull.Queue(name, { connection: { url: env.url }, prefix: bp }) as unknown as BullQueueView;
    try {
      const g1 = await bq.getJob('g1');
      expect(g1!.data).toEqual({ g: 1 });
      expect(g1!.opts.group).toBeUndefined();
      expect((await bq.getJob('t1'))!.opts.timeout).toBeUndefined();
    } finally {
      await bq.close();
    }
    const runs = await runWithBullMQ(bull, env.url, bp, name, 3);
    expect([...runs.keys()].sort()).toEqual(['g1', 'n1', 't1']);
  });
});

describe('schedulers', () => {
  it('moves job schedulers with their ids, schedule, template and next run; BullMQ runs each occurrence once', async () => {
    const bull = await loadBull(6);
    const bp = newBullPrefix();
    const name = env.queueName('sched');
    const queue = env.queue(name);
    await queue.upsertJobScheduler('every-second', { every: 1000 }, { name: 'tick', data: { kind: 'every' }, opts: { attempts: 2 } });
    await queue.upsertJobScheduler(
      'cron-paris',
      { pattern: '*/2 * * * * *', tz: 'Europe/Paris', limit: 1000 },
      { name: 'cron', data: { kind: 'cron' } },
    );
    await queue.upsertJobScheduler('nightly', { pattern: '0 3 * * *' }, { name: 'nightly' });
    const before = new Map((await queue.getJobSchedulers()).map((s) => [s.key, s]));
    const report = await migrateToBullMQ({ from: env.url, queue: name, prefix: bp, hopperPrefix: env.prefix });
    expect(report.schedulers).toBe(3);
    expect(report.lost).toBe(0);
    expect(isComplete(report)).toBe(true);
    expect(await queue.getJobSchedulers()).toEqual([]);
    expect(await queue.getJobCounts('delayed', 'waiting')).toEqual({ delayed: 0, waiting: 0 });
    const bq = new bull.Queue(name, { connection: { url: env.url }, prefix: bp }) as unknown as BullQueueView;
    try {
      const nightly = await bq.getJobScheduler('nightly');
      expect(nightly).toMatchObject({ key: 'nightly', name: 'nightly', pattern: '0 3 * * *', next: before.get('nightly')!.next });
      const cron = await bq.getJobScheduler('cron-paris');
      expect(cron).toMatchObject({ pattern: '*/2 * * * * *', tz: 'Europe/Paris', limit: 1000, template: { data: { kind: 'cron' } } });
      const every = await bq.getJobScheduler('every-second');
      expect(every).toMatchObject({ every: 1000, template: { data: { kind: 'every' }, opts: { attempts: 2 } } });
      const planned = await bq.getJob(`repeat:nightly:${before.get('nightly')!.next}`);
      expect(await planned!.getState()).toBe('delayed');
    } finally {
      await bq.close();
    }
    // BullMQ's workers run the occurrences and plan the next ones: each occurrence id runs once.
    const runs = await runWithBullMQ(bull, env.url, bp, name, 6);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    expect([...runs.keys()].some((id) => id.startsWith('repeat:every-second:'))).toBe(true);
    expect([...runs.keys()].some((id) => id.startsWith('repeat:cron-paris:'))).toBe(true);
  });
});
