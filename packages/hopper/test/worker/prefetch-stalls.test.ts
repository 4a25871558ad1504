/**
 * Claim-ahead (`prefetch`) and locks, on an injected clock: held-ahead jobs have their locks
 * renewed with the running ones; a worker that dies leaves them to stall rescue like any active
 * job; a held-ahead job whose lock is lost is dropped by its worker, never started there. And the
 * latency histograms count a held-ahead job's wait to its start, not to its claim.
 */
import { describe, expect, it } from 'vitest';
import type { Job } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';
import { withoutLockRenewal } from '../helpers/renewal.js';
import { collect, once, signal, until } from '../helpers/wait.js';

const env = useHopper({ fakeClock: true });

describe('prefetch: locks and stall rescue', () => {
  it("renews the held-ahead jobs' locks with the running job's; once the worker dies, stall rescue takes them all", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.addBulk([1, 2, 3].map((i) => ({ name: 'j', data: { i } })));
    const gate = signal();
    const started: string[] = [];
    const worker = withoutLockRenewal(
      env.worker(
        name,
        async (job) => {
          started.push(job.id as string);
          await gate.promise;
        },
        { concurrency: 1, prefetch: 2, lockDuration: 1000, skipStalledCheck: true },
      ),
    );
    await once(worker, 'active');
    expect(await queue.getJobCounts('active', 'waiting')).toEqual({ active: 3, waiting: 0 });
    const rescuer = env.worker(name, null, { autorun: false });
    env.clock!.advance(600);
    // One renewal covers the running job and both held ahead: none has lost its lock.
    expect(await worker.lockRenewer.runOnce()).toEqual([]);
    env.clock!.advance(600);
    expect((await rescuer.stallRescuer.runOnce(true)).rescued).toEqual([]);
    // The worker "dies" (renews no more): every job it held is rescued once its lock expires.
    env.clock!.advance(1001);
    expect([...(await rescuer.stallRescuer.runOnce(true)).rescued].sort()).toEqual(['1', '2', '3']);
    expect(await queue.getJobCounts('active', 'waiting')).toEqual({ active: 0, waiting: 3 });
    expect(started).toEqual(['1']);
    // Not really dead: it learns of the lost locks at its next renewal and drops the held-ahead jobs.
    env.expectErrors(/no longer holds it|Lost the lock/);
    const lost = once<[string[]]>(worker, 'lockRenewalFailed');
    await worker.lockRenewer.runOnce();
    const [ids] = await lost;
    expect([...ids].sort()).toEqual(['1', '2', '3']);
    await worker.close(true);
    expect(started).toEqual(['1']);
  });

  it('drops a held-ahead job whose lock was lost, and never starts it', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.addBulk([1, 2].map((i) => ({ name: 'j', data: { i }, opts: { removeOnComplete: false } })));
    const gate = signal();
    const first = signal<{ job: Job; token: string }>();
    const started: string[] = [];
    const worker = withoutLockRenewal(
      env.worker(
        name,
        async (job: Job, token?: string) => {
          started.push(job.id as string);
          if (job.id === '1') {
            first.resolve({ job, token: token as string });
            await gate.promise;
          }
          return job.id;
        },
        { concurrency: 1, prefetch: 1, lockDuration: 1000, skipStalledCheck: true },
      ),
    );
    const running = await first.promise;
    // Job 2 (held ahead) loses its lock: job 1's is extended by hand (its worker renews none), and
    // another worker's stall check rescues job 2 once its lock expired.
    const rescuer = env.worker(name, null, { autorun: false });
    let rescued: string[] = [];
    // The worker renews once by itself after its cancel subscription (withoutLockRenewal): a few
    // steps past lockDuration leave job 2's lock expired whenever that was.
    for (let step = 0; step < 5 && rescued.length === 0; step++) {
      env.clock!.advance(600);
      await running.job.extendLock(running.token, 1000);
      rescued = (await rescuer.stallRescuer.runOnce(true)).rescued;
    }
    expect(rescued).toEqual(['2']);
    const lost = once<[string[]]>(worker, 'lockRenewalFailed');
    await worker.lockRenewer.runOnce();
    expect((await lost)[0]).toEqual(['2']);
    // Job 1 finishes; the freed slot does not start job 2 here (another worker holds it now) but
    // claims it again, as a new attempt.
    const done = collect<[Job]>(worker, 'completed', 2);
    gate.resolve();
    const completed = await done;
    expect(completed.map(([job]) => job.id)).toEqual(['1', '2']);
    const two = await queue.getJob('2');
    expect(two?.attemptsStarted).toBe(2);
    expect(two?.stalledCounter).toBe(1);
    expect(started).toEqual(['1', '2']);
  });
});

describe('prefetch: latency histograms', () => {
  it("count a held-ahead job's time in the worker as wait, not as run", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.addBulk([
      { name: 'first', data: {} },
      { name: 'second', data: {} },
    ]);
    const gate = signal();
    const worker = env.worker(
      name,
      async (job: Job) => {
        if (job.name === 'first') await gate.promise;
      },
      { concurrency: 1, prefetch: 1 },
    );
    await until(async () => (worker as unknown as { heldAhead: { size: number } }).heldAhead.size === 1, 'second held ahead');
    env.clock!.advance(500);
    const done = collect(worker, 'completed', 2);
    gate.resolve();
    await done;
    await worker.close();
    const m = await queue.getExactMetrics();
    const of = (kind: string, label: string) => m.histograms.find((h) => h.kind === kind && h.label === label);
    expect(of('wait', 'second')?.sum).toBe(500);
    expect(of('run', 'second')?.sum).toBe(0);
    expect(of('run', 'first')?.sum).toBe(500);
  });
});
