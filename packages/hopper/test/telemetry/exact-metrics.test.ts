import { describe, expect, it } from 'vitest';
import { LATENCY_BUCKETS_MS, UnrecoverableError, type ExactMetrics, type Job } from '../../src/index.js';
import { createBackend } from '../../src/backend/create.js';
import { useHopper } from '../helpers/hopper.js';
import { collect, once } from '../helpers/wait.js';

const env = useHopper({ fakeClock: true });

function count(metrics: ExactMetrics, outcome: string, name: string): number {
  return metrics.counters.find((c) => c.outcome === outcome && c.name === name)?.count ?? 0;
}

describe('exact metrics: outcome counters and latency histograms', () => {
  it('counts completed, retried, failed, dead-lettered, timed-out, cancelled and deduplicated jobs per name', async () => {
    const name = env.queueName();
    const dlq = env.queueName();
    const queue = env.queue(name);
    env.queue(dlq);
    await queue.addBulk([
      { name: 'ok', data: {} },
      { name: 'ok', data: {} },
      { name: 'ok', data: {} },
      { name: 'flaky', data: {}, opts: { attempts: 2 } },
      { name: 'doomed', data: {}, opts: { deadLetter: { queue: dlq } } },
    ]);
    await queue.add('dup', {}, { deduplication: { id: 'd1' } });
    await queue.add('dup', {}, { deduplication: { id: 'd1' } });
    await queue.add('dup', {}, { deduplication: { id: 'd1' } });
    const cancelled = await queue.add('later', {}, { delay: 60_000 });
    await queue.cancelJob(cancelled.id as string);

    const worker = env.worker(name, async (job: Job) => {
      if (job.name === 'flaky') throw new Error('always');
      if (job.name === 'doomed') throw new UnrecoverableError('no');
      if (job.name === 'slow') return new Promise(() => undefined);
      return 1;
    });
    const done = collect(worker, 'completed', 4);
    const failedTwice = collect(worker, 'failed', 3);
    await done;
    await failedTwice;

    // A timed-out attempt (the fake clock passes its deadline), then its retry times out too.
    const slowFailed = collect(worker, 'failed', 2);
    const slowActive = once(worker, 'active');
    await queue.add('slow', {}, { timeout: 100, attempts: 2 });
    await slowActive;
    env.clock!.advance(100);
    env.clock!.advance(60_000); // the grace period ends: the attempt is given up
    await once(worker, 'active');
    env.clock!.advance(100);
    env.clock!.advance(60_000);
    await slowFailed;

    const m = await queue.getExactMetrics();
    expect(count(m, 'completed', 'ok')).toBe(3);
    expect(count(m, 'completed', 'dup')).toBe(1);
    expect(count(m, 'deduplicated', 'dup')).toBe(2);
    expect(count(m, 'retried', 'flaky')).toBe(1);
    expect(count(m, 'failed', 'flaky')).toBe(1);
    expect(count(m, 'failed', 'doomed')).toBe(1);
    expect(count(m, 'dead-lettered', 'doomed')).toBe(1);
    expect(count(m, 'dead-lettered', 'flaky')).toBe(0);
    expect(count(m, 'cancelled', 'later')).toBe(1);
    expect(count(m, 'timed-out', 'slow')).toBe(2);
    expect(count(m, 'retried', 'slow')).toBe(1);
    expect(count(m, 'failed', 'slow')).toBe(1);

    // Histograms: written when the worker closes (or every LATENCY_FLUSH_MS).
    await worker.close();
    const after = await queue.getExactMetrics();
    const run = after.histograms.find((h) => h.kind === 'run' && h.label === 'ok');
    expect(run?.count).toBe(3);
    expect(run?.buckets).toHaveLength(LATENCY_BUCKETS_MS.length + 1);
    expect(run?.buckets.at(-1)).toEqual({ le: Infinity, count: 3 });
    const wait = after.histograms.find((h) => h.kind === 'wait' && h.label === 'flaky');
    expect(wait?.count).toBe(1); // first attempts only
    const slowRun = after.histograms.find((h) => h.kind === 'run' && h.label === 'slow');
    expect(slowRun?.count).toBe(2);
    expect(slowRun?.sum).toBe(2 * 60_100);
  });

  it('counts a parent failed by its child (failParentOnFailure, another queue) as failed and dead-lettered in its own queue', async () => {
    const parentName = env.queueName('parent');
    const childName = env.queueName('child');
    const dlq = env.queueName('dlq');
    const parents = env.queue(parentName);
    const children = env.queue(childName);
    env.queue(dlq);
    const node = await env.flows().add({
      name: 'report',
      queueName: parentName,
      opts: { deadLetter: { queue: dlq } },
      children: [{ name: 'part', queueName: childName, opts: { failParentOnFailure: true } }],
    });
    const worker = env.worker(childName, async () => {
      throw new UnrecoverableError('bad part');
    });
    await once(worker, 'failed');
    expect(await parents.getJobState(node.job.id as string)).toBe('failed');
    const pm = await parents.getExactMetrics();
    expect(count(pm, 'failed', 'report')).toBe(1);
    expect(count(pm, 'dead-lettered', 'report')).toBe(1);
    const cm = await children.getExactMetrics();
    expect(count(cm, 'failed', 'part')).toBe(1);
    expect(count(cm, 'failed', 'report')).toBe(0);
  });

  it('counts manually processed attempts (getNextJob, moveToCompleted, moveToFailed) in the histograms', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('manual', {}, { attempts: 2 });
    // Known from its add, before any outcome (exporters show its series at 0).
    expect((await queue.getExactMetrics()).names).toEqual(['manual']);
    const worker = env.worker(name, null);
    const token = 'manual-token';
    const first = await worker.getNextJob(token);
    env.clock!.advance(30);
    await first!.moveToFailed(new Error('first try'), token);
    const second = await worker.getNextJob(token);
    expect(second?.id).toBe(first!.id);
    env.clock!.advance(70);
    await second!.moveToCompleted('ok', token);
    await worker.close();
    const m = await queue.getExactMetrics();
    const run = m.histograms.find((h) => h.kind === 'run' && h.label === 'manual');
    expect(run?.count).toBe(2);
    expect(run?.sum).toBe(100);
    expect(m.histograms.find((h) => h.kind === 'wait' && h.label === 'manual')?.count).toBe(1);
    expect(count(m, 'retried', 'manual')).toBe(1);
    expect(count(m, 'completed', 'manual')).toBe(1);
  });

  it('counts an active job cancelled from another process once, as cancelled (not failed)', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const worker = env.worker(name, async (_job, _token, signal) => {
      await new Promise((resolve) => signal?.addEventListener('abort', resolve));
      throw new Error('aborted');
    });
    // Listening before the add: the worker may take the job before `add` returns.
    const active = once(worker, 'active');
    const job = await queue.add('long', {});
    await active;
    const failed = once(worker, 'failed');
    await queue.cancelJob(job.id as string);
    await failed;
    const m = await queue.getExactMetrics();
    expect(count(m, 'cancelled', 'long')).toBe(1);
    expect(count(m, 'failed', 'long')).toBe(0);
    expect(count(m, 'retried', 'long')).toBe(0);
  });

  it('counts stalls, and a job failed for stalling', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('x', {});
    const backend = env.track(createBackend({ connection: env.url, prefix: env.prefix, queueName: name, role: 'command' }));
    const worker = env.worker(name, null, { autorun: false, maxStalledCount: 1 });
    for (const ghost of ['ghost:1:', 'ghost:2:']) {
      await backend.claim({ count: 1, lockMs: 1000, tokenPrefix: ghost }, env.clock!.backendNow());
      env.clock!.advance(1001);
      await worker.stallRescuer.runOnce(true);
    }
    const m = await queue.getExactMetrics();
    expect(count(m, 'stalled', 'x')).toBe(2);
    expect(count(m, 'failed', 'x')).toBe(1);
  });

  it('bounds the names: past 50 per queue, outcomes are counted under "other"', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.addBulk(Array.from({ length: 60 }, (_, i) => ({ name: `n${i}`, data: {} })));
    const worker = env.worker(name, async () => 1, { concurrency: 1 });
    await collect(worker, 'completed', 60);
    const m = await queue.getExactMetrics();
    const names = new Set(m.counters.map((c) => c.name));
    expect(names.size).toBe(51);
    expect(count(m, 'completed', 'other')).toBe(10);
    expect(m.counters.reduce((s, c) => s + c.count, 0)).toBe(60);
  });

  it('records scheduler lateness from the occurrence due instant to its start', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.upsertJobScheduler('tick', { every: 60_000 }, { name: 'tick' });
    const worker = env.worker(name, async () => 1);
    await once(worker, 'completed');
    await worker.close();
    const m = await queue.getExactMetrics();
    const late = m.histograms.find((h) => h.kind === 'lateness' && h.label === 'tick');
    expect(late?.count).toBe(1);
    expect(m.lastRuns).toHaveLength(1);
    expect(m.lastRuns[0]).toMatchObject({ scheduler: 'tick', durationMs: 0, outcome: 'completed' });
    expect(m.lastRuns[0].finishedAt).toBeGreaterThan(0);
  });

  it("records a triggered run under its scheduler's id (its job id sched:<id>:trigger:<now>)", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.upsertJobScheduler('nightly', { pattern: '0 3 * * *' }, { name: 'report' });
    const worker = env.worker(name, async () => 1);
    const completed = once<[Job]>(worker, 'completed');
    await queue.triggerJobScheduler('nightly');
    expect((await completed)[0].id).toMatch(/^sched:nightly:trigger:\d+$/);
    await worker.close();
    const m = await queue.getExactMetrics();
    expect(m.histograms.filter((h) => h.kind === 'lateness').map((h) => [h.label, h.count])).toEqual([['nightly', 1]]);
    expect(m.lastRuns.map((r) => r.scheduler)).toEqual(['nightly']);
  });
});
