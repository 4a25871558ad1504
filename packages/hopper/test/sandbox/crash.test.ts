/**
 * Children that die mid-job: process.exit, an uncaught error thrown from a timer, running out of
 * memory, and terminate() of a processor that ignores its signal. Each fails its run with a clear
 * reason, the child is gone (by pid, for processes), and the pool keeps working.
 */
import { describe, expect, it } from 'vitest';
import { SandboxCrashError, SandboxTerminatedError, type ChildExit } from '../../src/runtime/sandbox/index.js';
import { MODES, countSpawns, deferred, isAlive, makeJob, never, next, recordingHooks, rejection, usePools } from './support.js';

describe.each(MODES)('sandbox crashes in $mode', ({ useWorkerThreads }) => {
  const pool = usePools();

  /** Checks the child `id` is gone: not in the pool, and (a process) its pid no longer exists. */
  function expectGone(ids: number[], id: number): void {
    expect(ids).not.toContain(id);
    if (!useWorkerThreads) expect(isAlive(id)).toBe(false);
  }

  it('fails the run when the processor calls process.exit, and replaces the child for the next job', async () => {
    const p = pool('exit.mjs', { useWorkerThreads, maxChildren: 1 });
    const spawns = countSpawns(p);
    expect(await p.run(makeJob({}), recordingHooks(), never)).toBe('survived');
    const [crashed] = p.childIds;
    const exited = next(p, 'exited');
    const error = await rejection(p.run(makeJob({ exit: true }), recordingHooks(), never));
    expect(error).toBeInstanceOf(SandboxCrashError);
    expect(error).toMatchObject({ reason: 'exit', exitCode: 3, childId: crashed });
    expect(error.message).toMatch(/exited with code 3 before the processor finished/);
    expect(error.message).toMatch(/process\.exit\(\)/);
    const [exitedId] = await exited;
    expect(exitedId).toBe(crashed);
    expectGone(p.childIds, crashed);

    expect(await p.run(makeJob({}), recordingHooks(), never)).toBe('survived');
    expect(spawns.count).toBe(2);
    expect(p.childIds).toHaveLength(1);
    expect(p.childIds[0]).not.toBe(crashed);
  });

  it('fails the run with the uncaught error when one is thrown from a timer', async () => {
    const p = pool('uncaught.mjs', { useWorkerThreads, maxChildren: 1 });
    expect(await p.run(makeJob({}), recordingHooks(), never)).toBe('fine');
    const [crashed] = p.childIds;
    const error = await rejection(p.run(makeJob({ crash: true }), recordingHooks(), never));
    expect(error).toBeInstanceOf(SandboxCrashError);
    expect(error).toMatchObject({ reason: 'uncaught', exitCode: 1 });
    expect(error.message).toMatch(/crashed with an uncaught TypeError: kaboom from a timer/);
    expect(error.cause).toMatchObject({ name: 'TypeError', message: 'kaboom from a timer' });
    expectGone(p.childIds, crashed);
    expect(await p.run(makeJob({}), recordingHooks(), never)).toBe('fine');
  });

  it('fails the run with an out-of-memory reason when the child reaches its heap limit', async () => {
    const p = pool('oom.mjs', { useWorkerThreads, maxChildren: 1, maxMemoryMb: 32 });
    const spawned = next(p, 'spawned');
    const error = await rejection(p.run(makeJob(), recordingHooks(), never));
    const [id] = await spawned;
    expect(error).toBeInstanceOf(SandboxCrashError);
    expect(error.reason).toBe('out-of-memory');
    expect(error.message).toMatch(/ran out of memory/);
    if (!useWorkerThreads) {
      // V8 aborts the process and says why on stderr; the error quotes it.
      expect(error.signal).toBe('SIGABRT');
      expect(error.message).toMatch(/last stderr line: "FATAL ERROR: .*heap out of memory"/);
    }
    expectGone(p.childIds, id);
  }, 60_000);

  it('terminate() ends the child of a processor that ignores its signal (and SIGTERM)', async () => {
    const p = pool('ignore-signal.mjs', { useWorkerThreads, maxChildren: 1, killGraceMs: 200 });
    const spinning = deferred();
    const hooks = recordingHooks({
      log: async () => {
        spinning.resolve();
        return 1;
      },
    });
    const controller = new AbortController();
    const job = makeJob();
    const running = rejection(p.run(job, hooks, controller.signal));
    await spinning.promise;
    const [id] = p.childIds;
    controller.abort(new Error('timed out'));
    let exit: ChildExit | undefined;
    p.on('exited', (_id, e) => (exit = e));
    await p.terminate(job.id);
    // terminate() resolves once the child is gone.
    expectGone(p.childIds, id);
    // SIGTERM was ignored, so the pool escalated to SIGKILL after the grace period.
    if (!useWorkerThreads) expect(exit?.signal).toBe('SIGKILL');
    const error = await running;
    expect(error).toBeInstanceOf(SandboxTerminatedError);
    expect(error.reason).toBe('terminated');
    expect(error.message).toMatch(new RegExp(`Job ${job.id} was terminated by ending (child process|worker thread) ${id}`));
  });

  it('terminate() of a job still waiting for a child rejects it at once and leaves the running job alone', async () => {
    const p = pool('abort.mjs', { useWorkerThreads, maxChildren: 1 });
    const started = deferred();
    const first = new AbortController();
    const running = p.run(
      makeJob(),
      recordingHooks({
        log: async () => {
          started.resolve();
          return 1;
        },
      }),
      first.signal,
    );
    await started.promise;
    const queued = makeJob();
    const waiting = rejection(p.run(queued, recordingHooks(), never));
    await p.terminate(queued.id);
    const error = await waiting;
    expect(error).toBeInstanceOf(SandboxTerminatedError);
    expect(error.message).toMatch(/before it started/);
    first.abort();
    expect(await running).toMatchObject({ aborted: true });
  });
});
