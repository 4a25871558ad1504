/**
 * `Admin.doctor` on an injected clock: stalled jobs, and schedulers that skipped runs by overlap
 * or missed runs during downtime.
 */
import { describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backend/create.js';
import { Admin, type DoctorReport } from '../../src/index.js';
import { once, signal, until } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper({ fakeClock: true });
const MINUTE = 60_000;
const T0 = Date.UTC(2026, 0, 1); // the fake clock's start
const finding = (report: DoctorReport, queue: string, check: string) => report.findings.find((f) => f.queue === queue && f.check === check);

describe('doctor (injected clock)', () => {
  it('reports jobs that stalled, as an error once one failed for stalling', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {}, { attempts: 3, backoff: { type: 'fixed', delay: 10 } });
    const backend = env.track(createBackend({ connection: env.url, prefix: env.prefix, queueName: name, role: 'command' }));
    const worker = env.worker(name, null, { autorun: false, maxStalledCount: 1 });
    const admin = env.track(new Admin({ connection: env.url, prefix: env.prefix }));
    // A worker claims the job and dies; its lock expires; the stall check puts the job back.
    await backend.claim({ count: 1, lockMs: 1000, tokenPrefix: 'ghost:1:' }, env.clock!.backendNow());
    env.clock!.advance(1001);
    await worker.stallRescuer.runOnce(true);
    expect(finding(await admin.doctor(), name, 'stalled-jobs')).toMatchObject({ severity: 'warning' });
    // It dies again: past maxStalledCount, the job fails for stalling.
    await backend.claim({ count: 1, lockMs: 1000, tokenPrefix: 'ghost:2:' }, env.clock!.backendNow());
    env.clock!.advance(1001);
    await worker.stallRescuer.runOnce(true);
    expect(await job.getState()).toBe('failed');
    expect(finding(await admin.doctor(), name, 'stalled-jobs')).toMatchObject({ severity: 'error' });
  });

  it('reports a scheduler that skipped runs by overlap, and one that missed runs during downtime', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.upsertJobScheduler('slow', { every: MINUTE, overlap: 'skip' }, { name: 'slow' });
    const release = signal();
    let runs = 0;
    const worker = env.worker(name, async (job) => {
      if (job.name === 'slow' && ++runs === 1) await release.promise;
    });
    await once(worker, 'active');
    // The next occurrence is planned before the clock moves past it.
    await until(async () => (await queue.getJobSchedulerState('slow'))?.next === T0 + MINUTE, 'the next occurrence to be planned');
    env.clock!.advance(MINUTE);
    await until(
      async () => ((await queue.getJobSchedulerStates(0, -1, true))[0]?.skippedByOverlap ?? 0) > 0,
      'an occurrence skipped by overlap',
    );
    release.resolve();
    await worker.close();

    await queue.upsertJobScheduler('nightly', { every: MINUTE, catchup: 'none' }, { name: 'nightly' });
    // Nothing runs for ten minutes: the nightly runs of that time are missed.
    env.clock!.advance(10 * MINUTE);
    const second = env.worker(name, async () => 'ok');
    await until(
      async () => ((await queue.getJobSchedulerStates(0, -1, true)).find((s) => s.key === 'nightly')?.missed ?? 0) > 0,
      'missed occurrences to be counted',
    );
    await second.close();
    const admin = env.track(new Admin({ connection: env.url, prefix: env.prefix }));
    const report = await admin.doctor();
    expect(finding(report, name, 'scheduler-overlap')?.title).toContain('"slow"');
    expect(finding(report, name, 'scheduler-missed')).toMatchObject({ severity: 'info' });
  });
});
