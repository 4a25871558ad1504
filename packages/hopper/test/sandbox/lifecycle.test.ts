/**
 * The pool's life: processor files that cannot load (no spawn storm; retried after the window),
 * idle children reclaimed down to the minimum, close() ending every child, and the parent's event
 * loop staying free while a child burns CPU.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { InvalidOptionsError } from '../../src/job/errors.js';
import { SandboxLoadError, SandboxPool, SandboxTerminatedError } from '../../src/runtime/sandbox/index.js';
import { MODES, countSpawns, deferred, fixture, isAlive, makeJob, never, next, recordingHooks, rejection, usePools } from './support.js';

const scratch = mkdtempSync(join(tmpdir(), 'hopper-sandbox-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let fileSeq = 0;

/** Writes a processor file into a scratch directory (broken files do not belong in the repo). */
function scratchFile(source: string): string {
  const file = join(scratch, `processor-${++fileSeq}.mjs`);
  writeFileSync(file, source);
  return file;
}

describe.each(MODES)('sandbox life in $mode', ({ useWorkerThreads }) => {
  const pool = usePools();

  it('fails runs with the load error of a broken file, starting one child per retry window, then picks up the fix', async () => {
    const clock = new FakeClock();
    const file = scratchFile('export default async (job) => {\n  return job.data +;\n};\n');
    const p = pool(file, { useWorkerThreads, maxChildren: 4, loadRetryMs: 5_000, clock });
    const spawns = countSpawns(p);

    // Concurrent runs wait for the one child trying to load the file, and share its failure.
    const errors = await Promise.all([1, 2, 3, 4, 5].map(() => rejection(p.run(makeJob(), recordingHooks(), never))));
    for (const error of errors) {
      expect(error).toBeInstanceOf(SandboxLoadError);
      expect(error.message).toContain(`Cannot load the processor file ${file}: SyntaxError`);
    }
    // Later runs fail fast, with no new child.
    for (let i = 0; i < 3; i++) expect(await rejection(p.run(makeJob(), recordingHooks(), never))).toBeInstanceOf(SandboxLoadError);
    expect(spawns.count).toBe(1);

    // Fixed within the window: still failing fast until the window ends.
    writeFileSync(file, 'export default async (job) => job.data.n * 2;\n');
    expect(await rejection(p.run(makeJob({ n: 1 }), recordingHooks(), never))).toBeInstanceOf(SandboxLoadError);
    expect(spawns.count).toBe(1);
    clock.advance(5_000);
    expect(await p.run(makeJob({ n: 21 }), recordingHooks(), never)).toBe(42);
    expect(spawns.count).toBe(2);
  });

  it('reports a missing file and a file without a processor function as load errors', async () => {
    const missing = join(scratch, 'does-not-exist.mjs');
    const error = await rejection(pool(missing, { useWorkerThreads, maxChildren: 1 }).run(makeJob(), recordingHooks(), never));
    expect(error).toBeInstanceOf(SandboxLoadError);
    expect(error.message).toContain(`Cannot load the processor file ${missing}`);
    expect(error.message).toMatch(/Cannot find module/);
    expect((error.cause as { code?: string }).code).toBe('ERR_MODULE_NOT_FOUND');

    const noFunction = await rejection(
      pool('no-function.mjs', { useWorkerThreads, maxChildren: 1 }).run(makeJob(), recordingHooks(), never),
    );
    expect(noFunction).toBeInstanceOf(SandboxLoadError);
    expect(noFunction.message).toMatch(/exports no processor function \(found a default export of type number\)/);
  });

  it('treats a child that dies while loading as a load failure', async () => {
    const file = scratchFile('process.exit(9);\n');
    const p = pool(file, { useWorkerThreads, maxChildren: 2 });
    const error = await rejection(p.run(makeJob(), recordingHooks(), never));
    expect(error).toBeInstanceOf(SandboxLoadError);
    expect(error.message).toMatch(/ended with exit code 9 while loading it/);
  });

  it('reclaims idle children above minChildren after idleTimeoutMs', async () => {
    const clock = new FakeClock();
    const p = pool('gate.mjs', { useWorkerThreads, maxChildren: 3, minChildren: 1, idleTimeoutMs: 1_000, clock });
    // Three jobs wait at the gate together, so three children run.
    const gate = deferred();
    let arrived = 0;
    const allArrived = deferred();
    const hooks = recordingHooks({
      log: async () => {
        if (++arrived === 3) allArrived.resolve();
        await gate.promise;
        return 1;
      },
    });
    const runs = [1, 2, 3].map(() => p.run(makeJob(), hooks, never));
    await allArrived.promise;
    const spike = p.childIds;
    expect(spike).toHaveLength(3);
    gate.resolve();
    expect(new Set(await Promise.all(runs)).size).toBe(3);

    const exits: number[] = [];
    p.on('exited', (id) => exits.push(id));
    const secondExit = new Promise<void>((resolve) => p.on('exited', () => exits.length === 2 && resolve()));
    clock.advance(999);
    expect(clock.pendingTimers()).toBeGreaterThan(0);
    clock.advance(1);
    await secondExit;
    expect(p.childIds).toHaveLength(1);
    expect(spike).toEqual(expect.arrayContaining([...exits, ...p.childIds]));
    if (!useWorkerThreads) for (const pid of exits) expect(isAlive(pid)).toBe(false);

    // The minimum stays however long it idles, and serves the next job.
    clock.advance(60_000);
    const kept = p.childIds[0];
    expect(await p.run(makeJob(), recordingHooks(), never)).toBe(kept);
    expect(p.childIds).toEqual([kept]);
  });

  it('close() ends busy and idle children and fails the busy runs; later runs fail at once', async () => {
    const p = pool('abort.mjs', { useWorkerThreads, maxChildren: 3 });
    // Three processors wait for an abort; once all three wait, the first is let go, leaving
    // one idle child and two busy ones.
    let waiting = 0;
    const allWaiting = deferred();
    const hooks = recordingHooks({
      log: async () => {
        if (++waiting === 3) allWaiting.resolve();
        return 1;
      },
    });
    const first = new AbortController();
    const finished = p.run(makeJob(), hooks, first.signal);
    const busy = [rejection(p.run(makeJob(), hooks, never)), rejection(p.run(makeJob(), hooks, never))];
    await allWaiting.promise;
    first.abort();
    await finished;
    const ids = p.childIds;
    expect(ids).toHaveLength(3);

    await p.close();
    expect(p.childIds).toEqual([]);
    if (!useWorkerThreads) for (const pid of ids) expect(isAlive(pid), `pid ${pid}`).toBe(false);
    for (const error of await Promise.all(busy)) {
      expect(error).toBeInstanceOf(SandboxTerminatedError);
      expect(error.reason).toBe('closed');
      expect(error.message).toMatch(/because the sandbox pool was closed while it ran/);
    }
    const after = await rejection(p.run(makeJob(), recordingHooks(), never));
    expect(after).toBeInstanceOf(SandboxTerminatedError);
    expect(p.childIds).toEqual([]);
  });

  it('close() during a child start ends that child and fails the run waiting for it', async () => {
    const p = pool('echo.mjs', { useWorkerThreads, maxChildren: 1 });
    const exited = next(p, 'exited');
    const waiting = rejection(p.run(makeJob(), recordingHooks(), never));
    const [id] = p.childIds;
    expect(id).toBeDefined();
    await p.close();
    expect(await waiting).toMatchObject({ name: 'SandboxTerminatedError', reason: 'closed' });
    expect((await exited)[0]).toBe(id);
    expect(p.childIds).toEqual([]);
    if (!useWorkerThreads) expect(isAlive(id)).toBe(false);
  });

  it('keeps the parent event loop responsive while a child runs a CPU-bound job', async () => {
    const p = pool('cpu.mjs', { useWorkerThreads, maxChildren: 1 });
    // Warm up, so the child's start-up is not part of what is measured.
    await p.run(makeJob({ ms: 1 }), recordingHooks(), never);
    let last = performance.now();
    let worstGap = 0;
    let ticks = 0;
    const ticker = setInterval(() => {
      const now = performance.now();
      worstGap = Math.max(worstGap, now - last);
      last = now;
      ticks++;
    }, 10);
    try {
      const started = performance.now();
      const spins = await p.run(makeJob({ ms: 1_500 }), recordingHooks(), never);
      expect(performance.now() - started).toBeGreaterThanOrEqual(1_400);
      expect(spins).toBeGreaterThan(0);
    } finally {
      clearInterval(ticker);
    }
    // In-process, the gap would be the whole 1.5 s. Margin for a loaded machine.
    expect(worstGap).toBeLessThan(250);
    expect(ticks).toBeGreaterThan(40);
  });
});

describe('sandbox close() of child processes that ignore SIGTERM', () => {
  const pool = usePools();

  it('escalates to SIGKILL after killGraceMs, leaving no process behind', async () => {
    const p = pool(fixture('ignore-signal.mjs'), { maxChildren: 1, killGraceMs: 200 });
    const spinning = deferred();
    const running = rejection(
      p.run(
        makeJob(),
        recordingHooks({
          log: async () => {
            spinning.resolve();
            return 1;
          },
        }),
        never,
      ),
    );
    await spinning.promise;
    const [pid] = p.childIds;
    const exited = next(p, 'exited');
    await p.close();
    const [, exit] = await exited;
    expect(exit.signal).toBe('SIGKILL');
    expect(isAlive(pid)).toBe(false);
    expect(await running).toBeInstanceOf(SandboxTerminatedError);
  });
});

describe('sandbox options', () => {
  const pool = usePools();

  it('refuses options it cannot use, naming the option', () => {
    expect(() => new SandboxPool(fixture('echo.mjs'), { maxChildren: 0 })).toThrow(/maxChildren must be an integer >= 1, got 0/);
    expect(() => new SandboxPool(fixture('echo.mjs'), { maxChildren: 1, minChildren: 2 })).toThrow(
      /minChildren \(2\) must not exceed maxChildren \(1\)/,
    );
    expect(() => new SandboxPool(fixture('echo.mjs'), { maxChildren: 1, killGraceMs: -1 })).toThrow(InvalidOptionsError);
    expect(() => new SandboxPool('', { maxChildren: 1 })).toThrow(/must be a file path or a file: URL/);
  });

  it('accepts the processor file as a file: URL', async () => {
    const url = new URL('../fixtures/sandbox/echo.mjs', import.meta.url);
    const p = pool(url.href, { maxChildren: 1 });
    expect(await p.run(makeJob({ via: 'url' }), recordingHooks(), never)).toMatchObject({ format: 'esm', data: { via: 'url' } });
  });
});
