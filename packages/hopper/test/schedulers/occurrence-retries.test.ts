/**
 * A retry of a scheduler's occurrence is a retry (issue 12, defect 1): after its backoff it runs
 * like any job, under every overlap policy, and counts nothing (no overlap judgement, `fired`
 * and `skippedByOverlap` unchanged). Only an occurrence that never started is judged.
 */
import { describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backend/create.js';
import type { QueueBackend } from '../../src/backend/backend.js';
import { advanceScheduler } from '../../src/maintenance/scheduler-tick.js';
import type { Job } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';
import { once, until } from '../helpers/wait.js';

const env = useHopper({ fakeClock: true });
const MINUTE = 60_000;
const T0 = Date.UTC(2026, 0, 1); // the fake clock's start: on every minute grid

function backendOf(queueName: string): QueueBackend {
  return env.track(createBackend({ connection: env.url, prefix: env.prefix, queueName, role: 'command' }));
}

describe('retries of scheduler occurrences', () => {
  for (const overlap of ['skip', 'bufferOne', 'allowAll'] as const) {
    it(`overlap ${overlap}: a failed occurrence is retried after its backoff and counted once`, async () => {
      const name = env.queueName();
      const queue = env.queue(name);
      await queue.upsertJobScheduler(
        's',
        { every: MINUTE, overlap },
        { name: 'tick', opts: { attempts: 3, backoff: { type: 'fixed', delay: 1000 } } },
      );
      const attempts: string[] = [];
      const id = `sched:s:${T0}`;
      const worker = env.worker(name, async (job: Job) => {
        attempts.push(`${job.id}#${job.attemptsMade}`);
        if (job.id === id && job.attemptsMade === 0) throw new Error('transient');
        return 'ok';
      });
      await once(worker, 'failed');
      expect(await queue.getJobState(id)).toBe('delayed');
      await until(async () => (await queue.getJobSchedulerState('s'))?.next === T0 + MINUTE, 'the scheduler to plan its next occurrence');
      const completed = once<[Job]>(worker, 'completed');
      env.clock!.advance(1000);
      const [job] = await completed;
      expect(job.id).toBe(id);
      expect(attempts).toEqual([`${id}#0`, `${id}#1`]);
      expect(await queue.getJobSchedulerState('s')).toMatchObject({ fired: 1, skippedByOverlap: 0, missed: 0, next: T0 + MINUTE });
      // The schedule goes on: the next occurrence runs at its time and is counted.
      const next = once<[Job]>(worker, 'completed');
      env.clock!.advance(MINUTE - 1000);
      expect((await next)[0].id).toBe(`sched:s:${T0 + MINUTE}`);
      await until(async () => (await queue.getJobSchedulerState('s'))?.fired === 2, 'the second occurrence to be counted');
      expect(await queue.getJobSchedulerState('s')).toMatchObject({ skippedByOverlap: 0, missed: 0 });
    });
  }

  it('a retry delayed before its scheduler advanced neither stops the scheduler nor is withdrawn by pause', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.upsertJobScheduler(
      's',
      { every: MINUTE },
      { name: 'tick', opts: { attempts: 2, backoff: { type: 'fixed', delay: 5000 } } },
    );
    const backend = backendOf(name);
    // Claim the occurrence (ready since the upsert: due at once) and fail it with a retry before
    // anyone advances the scheduler (a worker would before running it: not this raw claim).
    const claimed = await backend.claim({ count: 1, lockMs: 30_000, tokenPrefix: 't:' }, env.clock!.now());
    expect(claimed.schedulersDue).toBe(false);
    const [occurrence] = claimed.jobs;
    expect(occurrence.id).toBe(`sched:s:${T0}`);
    const failed = await backend.fail(
      [
        {
          id: occurrence.id,
          token: occurrence.token,
          attempt: occurrence.attemptsStarted,
          reason: 'transient',
          stack: '',
          stackTraceLimit: 1,
          retryDelay: 5000,
          keep: { kind: 'keep' },
        },
      ],
      { count: 0, lockMs: 30_000, tokenPrefix: 'unused:' },
      env.clock!.now(),
    );
    expect(failed.codes).toEqual(['done']);
    expect(await queue.getJobState(occurrence.id)).toBe('delayed');
    // The retry is not the scheduler's pending occurrence: advancing plans the next one.
    expect(await advanceScheduler(backend, env.clock!, 's')).toBe(1);
    expect((await queue.getJobSchedulerState('s'))?.next).toBe(T0 + MINUTE);
    // Pausing withdraws the pending occurrence only, never the retry.
    await queue.pauseJobScheduler('s');
    expect(await queue.getJobState(`sched:s:${T0 + MINUTE}`)).toBe('unknown');
    expect(await queue.getJobState(occurrence.id)).toBe('delayed');
    const worker = env.worker(name, async () => 'ok');
    const completed = once<[Job]>(worker, 'completed');
    env.clock!.advance(5000);
    expect((await completed)[0].id).toBe(occurrence.id);
    expect(await queue.getJobSchedulerState('s')).toMatchObject({ fired: 1, skippedByOverlap: 0, missed: 0 });
  });

  it('a retry of a triggered run, and of an occurrence whose scheduler was removed, still runs', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.upsertJobScheduler(
      's',
      { pattern: '0 3 * * *' },
      { name: 'tick', opts: { attempts: 2, backoff: { type: 'fixed', delay: 1000 } } },
    );
    const triggered = await queue.triggerJobScheduler('s');
    const attempts: string[] = [];
    const worker = env.worker(name, async (job: Job) => {
      attempts.push(`${job.id}#${job.attemptsMade}`);
      if (job.attemptsMade === 0) throw new Error('transient');
      return 'ok';
    });
    await once(worker, 'failed');
    expect(await queue.getJobState(triggered!.id!)).toBe('delayed');
    await queue.removeJobScheduler('s');
    const completed = once<[Job]>(worker, 'completed');
    env.clock!.advance(1000);
    expect((await completed)[0].id).toBe(triggered!.id);
    expect(attempts).toEqual([`${triggered!.id}#0`, `${triggered!.id}#1`]);
  });
});
