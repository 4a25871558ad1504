/**
 * Sticky cancellation (test/cancel/sticky.test.ts) through orphan release: a cancelled job whose
 * claim's reply was lost (an orphan, released after the worker reconnects) ends failed as
 * cancelled, never back in line. Redis-only: an orphan is a claim whose reply was lost on the
 * network; a SQLite call is a transaction in the calling process, so its `releaseOrphans` finds
 * nothing (docs/backends.md). The other ways a cancelled job leaves its worker (stall rescue, a
 * closing worker, the holder's moves) run on both backends in test/cancel/sticky.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backend/create.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper({ fakeClock: true });

describe('sticky cancellation: orphan release', () => {
  it('orphan release after a reconnect ends a cancelled orphan failed as cancelled', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('charge', {}, { jobId: 'pay' });
    await queue.add('other', {}, { jobId: 'free' });
    const backend = env.track(createBackend({ connection: env.url, prefix: env.prefix, queueName: name, role: 'command' }));
    const { jobs } = await backend.claim({ count: 2, lockMs: 30_000, tokenPrefix: 'w1:1:' }, env.clock!.backendNow());
    expect(jobs.map((j) => j.id)).toEqual(['pay', 'free']);
    expect(await queue.cancelJob('pay', 'stop')).toBe('signalled');
    // The worker knows neither attempt (the claim's reply was lost): both are orphans.
    expect(await backend.releaseOrphans('w1', [], { kind: 'keep' }, env.clock!.backendNow())).toBe(2);
    const job = await queue.getJob('pay');
    expect(await job?.getState()).toBe('failed');
    expect(job?.failedReason).toBe('CancelledError: stop');
    expect(await queue.getJobState('free')).toBe('waiting');
  });
});
