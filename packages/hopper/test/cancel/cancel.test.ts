import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CancelledError, type Job } from '../../src/index.js';
import { createBackend } from '../../src/backend/create.js';
import { once, signal } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';
import { withoutLockRenewal } from '../helpers/renewal.js';

// Cancels come from other processes: on SQLite the test's database is then a file they all open.
const env = useHopper({ processes: true });
const run = promisify(execFile);
const cancelScript = fileURLToPath(new URL('../fixtures/cancel-job.mjs', import.meta.url));

/** Cancels from another process, as an admin tool or another service would. */
async function cancelFromAnotherProcess(queueName: string, jobId: string, reason: string): Promise<string> {
  const { stdout } = await run(process.execPath, [cancelScript, env.url, env.prefix, queueName, jobId, reason]);
  return stdout;
}

describe('cancellation', () => {
  it('cancels waiting, prioritized and delayed jobs at once from another process: failed, not run, not retried', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('w', {}, { jobId: 'w', attempts: 3 });
    await queue.add('p', {}, { jobId: 'p', priority: 2, attempts: 3 });
    await queue.add('d', {}, { jobId: 'd', delay: 60_000, attempts: 3 });
    for (const id of ['w', 'p', 'd']) expect(await cancelFromAnotherProcess(name, id, 'user asked')).toBe('cancelled');
    for (const id of ['w', 'p', 'd']) {
      const job = await queue.getJob(id);
      expect(await job?.getState()).toBe('failed');
      expect(job?.failedReason).toBe('CancelledError: user asked');
    }
    // Cancelling again answers as the first call did (a re-sent call is idempotent).
    expect(await queue.cancelJob('w')).toBe('cancelled');
    expect(await queue.cancelJob('nope')).toBe('missing');
    // A worker started now runs only what was not cancelled.
    const ran: string[] = [];
    const worker = env.worker(name, async (job) => void ran.push(job.id as string));
    const other = await queue.add('after', {});
    await once(worker, 'completed');
    expect(ran).toEqual([other.id]);
  });

  it("aborts an active job's signal promptly, told not at the next lock renewal (none is scheduled), and it ends cancelled", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('long', {}, { attempts: 3 });
    const aborted = signal<{ reason: unknown; at: number }>();
    const worker = withoutLockRenewal(
      env.worker(name, async (_job, _token, abort) => {
        await new Promise<void>((resolve) => abort?.addEventListener('abort', () => resolve()));
        aborted.resolve({ reason: abort?.reason, at: performance.now() });
        return 'finished anyway';
      }),
    );
    await once(worker, 'active');
    const failed = once<[Job, Error]>(worker, 'failed');
    const started = performance.now();
    expect(await cancelFromAnotherProcess(name, job.id as string, 'stop')).toBe('signalled');
    const { reason, at } = await aborted.promise;
    expect(reason).toBeInstanceOf(CancelledError);
    // From the cancel call (including starting a process) to the abort: told at once (Redis pub/sub,
    // SQLite's cancel signal polled every 10 ms at most), not at a lock renewal (none is scheduled).
    expect(at - started).toBeLessThan(5_000);
    const [, error] = await failed;
    expect(error).toBeInstanceOf(CancelledError);
    const stored = await queue.getJob(job.id as string);
    expect(await stored?.getState()).toBe('failed');
    expect(stored?.failedReason).toBe('CancelledError: stop');
    expect(stored?.attemptsMade).toBe(1);
  });

  it('a job the worker claimed before its cancel subscription took effect still hears a cancel sent at once', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('early', {});
    const aborted = signal<unknown>();
    // No renewal scheduled: only the cancel notification (Redis pub/sub, SQLite's cancel signal), or
    // the renewal made when the subscription takes effect, can tell it.
    const worker = withoutLockRenewal(
      env.worker(name, async (_job, _token, abort) => {
        await new Promise<void>((resolve) => abort?.addEventListener('abort', () => resolve()));
        aborted.resolve(abort?.reason);
      }),
    );
    await once(worker, 'active');
    const failed = once<[Job, Error]>(worker, 'failed');
    expect(await queue.cancelJob(job.id as string, 'early')).toBe('signalled');
    expect(await aborted.promise).toBeInstanceOf(CancelledError);
    expect((await failed)[1]).toBeInstanceOf(CancelledError);
  });

  it('a cancelled active job ends cancelled even if its processor ignores the signal and succeeds', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('stubborn', {}, { attempts: 3, removeOnComplete: false });
    const release = signal();
    const worker = env.worker(name, async () => {
      await release.promise;
      return 'done';
    });
    await once(worker, 'active');
    expect(await queue.cancelJob(job.id as string)).toBe('signalled');
    release.resolve();
    await once(worker, 'failed');
    const stored = await queue.getJob(job.id as string);
    expect(await stored?.getState()).toBe('failed');
    expect(stored?.returnvalue).toBeNull();
  });

  it('lock renewal reports a cancelled job too (the fallback when the message was missed)', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {});
    const backend = env.track(createBackend({ connection: env.url, prefix: env.prefix, queueName: name, role: 'command' }));
    const { jobs } = await backend.claim({ count: 1, lockMs: 30_000, tokenPrefix: 'ghost:' });
    expect(await queue.cancelJob(job.id as string, 'late')).toBe('signalled');
    const renewed = await backend.extendLocks(
      [{ id: jobs[0].id, token: jobs[0].token, attempt: jobs[0].attemptsStarted }],
      30_000,
      undefined,
    );
    expect(renewed.cancelled).toEqual([job.id]);
    expect(renewed.lost).toEqual([]);
    // The holder then fails it (whatever it reports): cancelled, no retry.
    const ack = await backend.fail(
      [
        {
          id: jobs[0].id,
          token: jobs[0].token,
          attempt: 1,
          reason: 'aborted',
          stack: '',
          stackTraceLimit: 1,
          retryDelay: 0,
          keep: { kind: 'keep' },
        },
      ],
      { count: 0, lockMs: 1, tokenPrefix: 'ghost:' },
    );
    expect(ack.codes).toEqual(['cancelled']);
    expect((await queue.getJob(job.id as string))?.failedReason).toBe('CancelledError: late');
  });
});
