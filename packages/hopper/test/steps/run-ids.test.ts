/**
 * Run ids come from the job's record, never parsed from its id: a first turn whose id ends in
 * `:<digits>` (`conv:42`) is the run `conv:42` (its next turn `conv:42:1`), not turn 42 of run
 * `conv`; a next turn's id already taken by another job is refused with a typed error instead of
 * silently "continuing" into that job. A first turn added as `<runId>:0` (the documented form) is
 * turn 0 of run `<runId>`.
 */
import { describe, expect, it } from 'vitest';
import { InvalidStateError, type Job } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';
import { once, signal } from '../helpers/wait.js';

const env = useHopper();

describe('run ids', () => {
  it("continues conv:42 as its own run (conv:42:1), not as another run's turn 43", async () => {
    const name = env.queueName('rid');
    const queue = env.queue(name);
    await queue.add('other', {}, { jobId: 'conv:43', delay: 60_000 });
    const next: string[] = [];
    const worker = env.worker(name, async (job: Job<{ n: number }>) => {
      if (job.data.n < 2) next.push(await job.continueWith({ n: job.data.n + 1 }));
      return job.id;
    });
    const last = once<[Job]>(worker, 'completed', (job: Job) => (job.data as { n: number }).n === 2, 20_000);
    await queue.add('turn', { n: 0 }, { jobId: 'conv:42' });
    await last;
    expect(next).toEqual(['conv:42:1', 'conv:42:2']);
    expect((await queue.getRun('conv:42'))?.lastTurn).toBe('conv:42:2');
    expect(await queue.getRun('conv')).toBeUndefined();
    // The other run's job was left alone.
    expect(await queue.getJob('conv:43').then((j) => j?.name)).toBe('other');
  });

  it('keeps the documented <runId>:0 form: turn 0 of run <runId>', async () => {
    const name = env.queueName('zero');
    const queue = env.queue(name);
    const next: string[] = [];
    const worker = env.worker(name, async (job: Job<{ n: number }>) => {
      if (job.data.n < 1) next.push(await job.continueWith({ n: job.data.n + 1 }));
    });
    const done = once<[Job]>(worker, 'completed', (job: Job) => (job.data as { n: number }).n === 1, 20_000);
    await queue.add('turn', { n: 0 }, { jobId: 'agent:0' });
    await done;
    expect(next).toEqual(['agent:1']);
    expect((await queue.getRun('agent'))?.lastTurn).toBe('agent:1');
  });

  it('cancelRun of a run whose id ends in digits stops its latest turn', async () => {
    const name = env.queueName('cancel');
    const queue = env.queue(name);
    const started = signal<string>();
    env.worker(name, async (job: Job<{ n: number }>, _token, abort) => {
      if (job.data.n === 0) {
        await job.continueWith({ n: 1 });
        return;
      }
      started.resolve(job.id as string);
      await new Promise((resolve) => abort?.addEventListener('abort', resolve, { once: true }));
      throw abort?.reason;
    });
    await queue.add('turn', { n: 0 }, { jobId: 'conv:42' });
    expect(await started.promise).toBe('conv:42:1');
    const result = await queue.cancelRun('conv:42', 'stop');
    expect(result.turn).toBe('conv:42:1');
    expect(['cancelled', 'signalled']).toContain(result.result);
    expect((await queue.getRun('conv:42'))?.cancelled).toBe(true);
  });

  it('refuses a next turn whose id another job holds, with a typed error', async () => {
    const name = env.queueName('taken');
    const queue = env.queue(name);
    await queue.add('squatter', {}, { jobId: 'chat:1', delay: 60_000 });
    const worker = env.worker(name, async (job: Job) => {
      await job.continueWith({});
    });
    const failed = once<[Job, Error]>(worker, 'failed');
    await queue.add('turn', {}, { jobId: 'chat:0' });
    const [, err] = await failed;
    expect(err).toBeInstanceOf(InvalidStateError);
    expect(err.message).toMatch(/chat:1/);
    expect(await queue.getJob('chat:1').then((j) => j?.name)).toBe('squatter');
  });
});
