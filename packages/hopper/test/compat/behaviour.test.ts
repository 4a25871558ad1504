/**
 * Behaviour a user migrating from BullMQ relies on (issue 13): stalled-job failures, the
 * step-job pattern, pause and run, manual fetching, job.delay, rate-limit getters, priority
 * bounds, event arguments and listener errors.
 */
import { describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backend/create.js';
import type { Job } from '../../src/index.js';
import { once } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper({ fakeClock: true });

/** A worker that claimed jobs and died: claims through the seam, never renews or finishes. */
async function ghostClaim(queueName: string, count = 1, lockMs = 1000) {
  const backend = env.track(createBackend({ connection: env.url, prefix: env.prefix, queueName, role: 'command' }));
  return backend.claim({ count, lockMs, tokenPrefix: 'ghost:1:' }, env.clock!.backendNow());
}

describe('stalled jobs, as BullMQ reports them', () => {
  it("a job failed for too many stalls emits the worker's failed with BullMQ's reason", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {});
    const worker = env.worker(name, null, { autorun: false, maxStalledCount: 0 });
    await ghostClaim(name);
    env.clock!.advance(1001);
    const failed = once<[Job | undefined, Error, string]>(worker, 'failed');
    const stalled = once<[string, string]>(worker, 'stalled');
    await worker.stallRescuer.runOnce(true);
    expect(await stalled).toEqual([job.id, 'active']);
    const [failedJob, err, prev] = await failed;
    expect(err.message).toBe('job stalled more than allowable limit');
    expect(prev).toBe('active');
    expect(failedJob?.id).toBe(job.id);
    expect(failedJob?.stalledCounter).toBe(1);
    expect(failedJob?.finishedOn).toBeTypeOf('number');
  });

  it('a job removed on failure still emits failed (without the job)', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('x', {}, { removeOnFail: true });
    const worker = env.worker(name, null, { autorun: false, maxStalledCount: 0 });
    await ghostClaim(name);
    env.clock!.advance(1001);
    const failed = once<[Job | undefined, Error, string]>(worker, 'failed');
    await worker.stallRescuer.runOnce(true);
    const [failedJob, err] = await failed;
    expect(failedJob).toBeUndefined();
    expect(err.message).toBe('job stalled more than allowable limit');
  });

  it("a rescued job's stalledCounter is loaded on the job its processor gets", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('x', {});
    const worker = env.worker(name, async (job) => job.stalledCounter, { autorun: false, maxStalledCount: 2 });
    await ghostClaim(name);
    env.clock!.advance(1001);
    await worker.stallRescuer.runOnce(true);
    const completed = once<[Job, number]>(worker, 'completed');
    void worker.run();
    const [done, result] = await completed;
    expect(result).toBe(1);
    expect(done.stalledCounter).toBe(1);
  });
});
