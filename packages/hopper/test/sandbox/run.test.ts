/**
 * Sandbox runs: ESM and CommonJS processor files in child processes and worker threads, return
 * values, thrown errors, the job methods that call the parent (including `step` and a hook that
 * rejects), and the abort signal.
 */
import { threadId } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { UnrecoverableError } from '../../src/job/errors.js';
import { MODES, deferred, makeJob, never, recordingHooks, rejection, usePools } from './support.js';

describe.each(MODES)('sandbox runs in $mode', ({ useWorkerThreads }) => {
  const pool = usePools();
  const ownId = useWorkerThreads ? threadId : process.pid;

  it('runs an ESM processor in a child and resolves with its return value', async () => {
    const p = pool('echo.mjs', { useWorkerThreads, maxChildren: 1 });
    const job = makeJob({ n: 1, nested: { list: [1, 'two'] } });
    const result = (await p.run(job, recordingHooks(), never)) as Record<string, unknown>;
    expect(result).toMatchObject({
      format: 'esm',
      id: job.id,
      name: 'test',
      data: { n: 1, nested: { list: [1, 'two'] } },
      attemptsMade: 0,
      queueName: 'sandbox',
      token: job.token,
      signalIsAbortSignal: true,
    });
    expect(result.childId).not.toBe(ownId);
    expect(p.childIds).toEqual([result.childId]);
  });

  it('runs a CommonJS processor (module.exports, and exports.default as TypeScript compiles it)', async () => {
    const cjs = pool('echo.cjs', { useWorkerThreads, maxChildren: 1 });
    expect(await cjs.run(makeJob({ n: 2 }), recordingHooks(), never)).toMatchObject({ format: 'cjs', data: { n: 2 } });
    const compiled = pool('exports-default.cjs', { useWorkerThreads, maxChildren: 1 });
    expect(await compiled.run(makeJob({ a: 2, b: 3 }), recordingHooks(), never)).toEqual({ format: 'cjs-default', sum: 5 });
  });

  it('reuses an idle child for the next job and runs jobs in parallel up to maxChildren', async () => {
    const p = pool('echo.mjs', { useWorkerThreads, maxChildren: 2 });
    const first = (await p.run(makeJob(), recordingHooks(), never)) as { childId: number };
    const second = (await p.run(makeJob(), recordingHooks(), never)) as { childId: number };
    expect(second.childId).toBe(first.childId);
    const parallel = (await Promise.all([1, 2, 3, 4].map(() => p.run(makeJob(), recordingHooks(), never)))) as { childId: number }[];
    expect(new Set(parallel.map((r) => r.childId)).size).toBe(2);
    expect(p.childIds).toHaveLength(2);
  });

  it('rejects with the processor error, keeping its name (UnrecoverableError is recognised), message, stack and code', async () => {
    const p = pool('throws.mjs', { useWorkerThreads, maxChildren: 1 });
    const unrecoverable = await rejection(p.run(makeJob({ kind: 'unrecoverable', invoice: 7 }), recordingHooks(), never));
    expect(unrecoverable).toBeInstanceOf(UnrecoverableError);
    expect(unrecoverable.name).toBe('UnrecoverableError');
    expect(unrecoverable.message).toBe('invoice 7 is invalid');
    expect(unrecoverable.stack).toContain('throws.mjs');

    const coded = await rejection(p.run(makeJob({ kind: 'coded' }), recordingHooks(), never));
    expect(coded).not.toBeInstanceOf(UnrecoverableError);
    expect([coded.name, coded.message, coded.code]).toEqual(['RangeError', 'quota exceeded', 'E_QUOTA']);

    const thrownString = await rejection(p.run(makeJob({ kind: 'string' }), recordingHooks(), never));
    expect(thrownString.message).toBe('A non-Error value was thrown: "a plain string"');

    // A return value that is not JSON fails the attempt with the serialisation error.
    const bigint = await rejection(p.run(makeJob({ kind: 'bigint' }), recordingHooks(), never));
    expect(bigint.name).toBe('TypeError');
    expect(bigint.message).toMatch(/BigInt/);
    // The child survived all of it.
    expect(p.childIds).toHaveLength(1);
  });

  it('routes updateProgress, log, updateData and step through the hooks, including rejections', async () => {
    const p = pool('hooks.mjs', { useWorkerThreads, maxChildren: 1 });
    const lockLost = Object.assign(new Error('job 9 lost its lock'), { name: 'LockLostError' });
    const hooks = recordingHooks({
      log: async (line) => {
        if (line === 'rejected line') throw lockLost;
        return 4;
      },
    });
    const result = await p.run(makeJob({ stage: 1 }), hooks, never);
    expect(result).toEqual({
      progressAfter: { percent: 50 },
      logCount: 4,
      dataAfter: { stage: 2 },
      step1: { charged: 42 },
      // The hook had a stored result for "charge": the child's second function never ran.
      step2: { charged: 42 },
      ran: 1,
      stepError: { name: 'TypeError', message: 'card declined' },
      logError: { name: 'LockLostError', message: 'job 9 lost its lock' },
    });
    expect(hooks.calls).toEqual([
      ['updateProgress', { percent: 50 }],
      ['log', 'first line'],
      ['updateData', { stage: 2 }],
      ['step', 'charge'],
      ['step', 'charge'],
      ['step', 'failing'],
      ['log', 'rejected line'],
    ]);
    expect([...hooks.steps]).toEqual([['charge', { charged: 42 }]]);
  });

  it('the step hook decides: a stored result is returned without running the function', async () => {
    const p = pool('hooks.mjs', { useWorkerThreads, maxChildren: 1 });
    const hooks = recordingHooks({
      step: async (key, run) => (key === 'charge' ? { charged: 'from a previous attempt' } : run()),
    });
    const result = (await p.run(makeJob({}), hooks, never)) as Record<string, unknown>;
    expect(result).toMatchObject({ step1: { charged: 'from a previous attempt' }, ran: 0 });
  });

  it('rejects a job call made after the processor returned, without calling the hooks', async () => {
    const p = pool('late-call.mjs', { useWorkerThreads, maxChildren: 1 });
    const firstHooks = recordingHooks();
    expect(await p.run(makeJob({ first: true }), firstHooks, never)).toBe('first');
    const secondHooks = recordingHooks();
    const late = await p.run(makeJob({}), secondHooks, never);
    expect(late).toMatch(/^Error: job\.log\(\) was called after the processor had returned, so it was ignored/);
    expect([...firstHooks.calls, ...secondHooks.calls]).toEqual([]);
  });

  it('aborts the processor signal when the run signal aborts, with the same reason', async () => {
    const p = pool('abort.mjs', { useWorkerThreads, maxChildren: 1 });
    const waiting = deferred();
    const hooks = recordingHooks({
      log: async () => {
        waiting.resolve();
        return 1;
      },
    });
    const controller = new AbortController();
    const running = p.run(makeJob(), hooks, controller.signal);
    await waiting.promise;
    controller.abort(Object.assign(new Error('job exceeded its 100 ms timeout'), { name: 'TimeoutError' }));
    expect(await running).toEqual({
      atStart: false,
      aborted: true,
      reasonName: 'TimeoutError',
      reasonMessage: 'job exceeded its 100 ms timeout',
    });
  });

  it('starts the processor with an aborted signal when the run signal aborted before the run began', async () => {
    const p = pool('abort.mjs', { useWorkerThreads, maxChildren: 1 });
    const result = await p.run(makeJob(), recordingHooks(), AbortSignal.abort());
    expect(result).toMatchObject({ atStart: true, aborted: true, reasonName: 'AbortError' });
  });
});
