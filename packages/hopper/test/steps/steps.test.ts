import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LockLostError, UnrecoverableError, type Job } from '../../src/index.js';
import { once, signal } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';
import { withoutLockRenewal } from '../helpers/renewal.js';

// Child processes open the test's connection: on SQLite, a file database (see useHopper).
const env = useHopper({ processes: true });
const built = fileURLToPath(new URL('../../dist/esm/index.js', import.meta.url));

describe('durable steps', () => {
  it('runs a step once and always returns the stored, JSON round-tripped value', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('x', {}, { removeOnComplete: false });
    let runs = 0;
    const worker = env.worker(name, async (job) => {
      const first = await job.step('when', () => {
        runs++;
        return { at: new Date(Date.UTC(2026, 0, 1)), n: 1 };
      });
      const again = await job.step('when', () => {
        runs++;
        return { at: 'never', n: 2 };
      });
      return { first, again };
    });
    const [job, result] = await once<[Job, { first: unknown; again: unknown }]>(worker, 'completed');
    expect(runs).toBe(1);
    expect(result.first).toEqual({ at: '2026-01-01T00:00:00.000Z', n: 1 });
    expect(result.again).toEqual(result.first);
    const steps = await (await queue.getJob(job.id as string))!.getSteps();
    expect(steps).toMatchObject([{ key: 'when', result: { at: '2026-01-01T00:00:00.000Z', n: 1 } }]);
  });

  it('does not repeat a completed step on a retry; reruns a step that threw', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {}, { attempts: 3, removeOnComplete: false });
    const effects: string[] = [];
    let attempt = 0;
    const worker = env.worker(name, async (j) => {
      attempt++;
      await j.step('charge', () => effects.push(`charge#${attempt}`));
      await j.step('email', () => {
        effects.push(`email#${attempt}`);
        if (attempt < 3) throw new Error('smtp down');
      });
      return 'ok';
    });
    await once(worker, 'completed');
    expect(effects).toEqual(['charge#1', 'email#1', 'email#2', 'email#3']);
    const steps = await (await queue.getJob(job.id as string))!.getSteps();
    expect(steps.map((s) => s.key).sort()).toEqual(['charge', 'email']);
    expect(steps.find((s) => s.key === 'email')).toMatchObject({ result: null });
    expect(steps.every((s) => s.durationMs >= 0 && s.at > 0)).toBe(true);
  });

  it('a stale attempt cannot record a step', async () => {
    env.expectErrors(/LockLostError/); // the stale attempt's result is refused, and reported
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('x', {});
    const stale = signal<Job>();
    const release = signal();
    let attempt = 0;
    const worker = withoutLockRenewal(
      env.worker(
        name,
        async (job) => {
          attempt++;
          if (attempt === 1) {
            stale.resolve(job);
            await release.promise;
          }
          return attempt;
        },
        { lockDuration: 300, stalledInterval: 100, concurrency: 2 },
      ),
    );
    const staleJob = await stale.promise;
    await once(worker, 'completed');
    await expect(staleJob.step('late', () => 'effect')).rejects.toBeInstanceOf(LockLostError);
    release.resolve();
  });

  it('a step survives a worker SIGKILLed between two steps (real process): its effect is not repeated', async () => {
    if (!existsSync(built)) throw new Error('Run `npm run build` first (npm test does): the child worker uses the built package.');
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('two-steps', {}, { removeOnComplete: false });
    const child = fork(fileURLToPath(new URL('../fixtures/step-worker.mjs', import.meta.url)), [env.url, env.prefix, name], {
      stdio: 'ignore',
    });
    await new Promise<void>((resolve, reject) => {
      child.on('message', (m: { firstDone?: boolean; error?: string }) => (m.firstDone ? resolve() : reject(new Error(m.error))));
      child.on('exit', (code) => reject(new Error(`step worker exited early (${code})`)));
    });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    let firstRuns = 0;
    const survivor = env.worker(
      name,
      async (j) => {
        await j.step('first', () => ++firstRuns);
        return j.step('second', () => 'second done');
      },
      { stalledInterval: 100 },
    );
    await once(survivor, 'completed');
    expect(firstRuns).toBe(0);
    const stored = await queue.getJob(job.id as string);
    expect(stored?.returnvalue).toBe('second done');
    // The killed process's effect is the one recorded (its pid), and the survivor's second step.
    expect((await stored!.getSteps()).map((st) => [st.key, st.result]).sort()).toEqual([
      ['first', child.pid],
      ['second', 'second done'],
    ]);
  });

  it('a dead-letter replay keeps the recorded steps', async () => {
    const name = env.queueName();
    const dlqName = env.queueName('dlq');
    const queue = env.queue(name, { deadLetter: { queue: dlqName } });
    const dlq = env.queue(dlqName);
    await queue.add('pay', {}, { jobId: 'pay-1' });
    let charges = 0;
    let fail = true;
    const worker = env.worker(name, async (job) => {
      await job.step('charge', () => ++charges);
      if (fail) throw new UnrecoverableError('ledger down');
      return 'settled';
    });
    await once(worker, 'failed');
    fail = false;
    const done = once(worker, 'completed');
    await (await dlq.getWaiting())[0].replay();
    await done;
    expect(charges).toBe(1);
  });

  it('continueWith adds the next turn once, even when a turn is replayed; maxTurns stops the loop', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('turn', { runId: 'run-1' }, { jobId: 'run-1:0', attempts: 2 });
    const turns: string[] = [];
    let crashed = false;
    const worker = env.worker(
      name,
      async (job) => {
        turns.push(job.id as string);
        const next = await job.continueWith(job.data, { maxTurns: 3 });
        if (job.id === 'run-1:1' && !crashed) {
          crashed = true;
          throw new Error('crash after continuing'); // retried: its continuation is already recorded
        }
        return next;
      },
      { concurrency: 1 },
    );
    const [loopEnd, error] = await once<[Job, Error]>(worker, 'failed', (j: Job) => j.id === 'run-1:3');
    expect(loopEnd.id).toBe('run-1:3');
    expect(error).toBeInstanceOf(UnrecoverableError);
    expect(error.message).toContain('maxTurns');
    expect(turns.filter((t) => t === 'run-1:1')).toHaveLength(2);
    expect(turns.filter((t) => t === 'run-1:2')).toHaveLength(1);
    expect(turns).toContain('run-1:3');
    expect(await queue.getJob('run-1:4')).toBeUndefined();
    expect((await (await queue.getJob('run-1:1'))!.getSteps()).map((st) => st.result)).toEqual(['run-1:2']);
  });
});
