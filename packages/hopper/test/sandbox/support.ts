/**
 * Helpers for the sandbox tests: fixture paths, jobs, recording hooks, pools that are closed
 * after each test (with a check that every child process they started is gone), and waits on
 * the pool's events.
 */
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterEach, expect } from 'vitest';
import { SandboxPool, type SandboxHooks, type SandboxJob, type SandboxOptions } from '../../src/runtime/sandbox/index.js';
import type { SandboxPoolEvents } from '../../src/runtime/sandbox/pool.js';

/** Absolute path of a file in test/fixtures/sandbox. */
export function fixture(name: string): string {
  return fileURLToPath(new URL(`../fixtures/sandbox/${name}`, import.meta.url));
}

/** The two kinds of child, for `describe.each`. */
export const MODES = [
  { mode: 'child processes', useWorkerThreads: false },
  { mode: 'worker threads', useWorkerThreads: true },
] as const;

let jobSeq = 0;

/** A job as the worker would pass it. */
export function makeJob(data: unknown = {}, overrides: Partial<SandboxJob> = {}): SandboxJob {
  jobSeq++;
  return {
    id: `job-${jobSeq}`,
    name: 'test',
    data,
    opts: { attempts: 3 },
    attemptsMade: 0,
    attemptsStarted: 1,
    timestamp: Date.UTC(2026, 0, 1),
    processedOn: Date.UTC(2026, 0, 1),
    delay: 0,
    priority: 0,
    queueName: 'sandbox',
    token: `worker-1:7:${jobSeq}`,
    progress: 0,
    ...overrides,
  };
}

/** Hooks that record their calls; `step` keeps results by key, as the worker's does. */
export interface RecordingHooks extends SandboxHooks {
  readonly calls: [method: string, arg: unknown][];
  readonly steps: Map<string, unknown>;
}

export function recordingHooks(overrides: Partial<SandboxHooks> = {}): RecordingHooks {
  const calls: [string, unknown][] = [];
  const steps = new Map<string, unknown>();
  let lines = 0;
  return {
    calls,
    steps,
    updateProgress: async (progress) => {
      calls.push(['updateProgress', progress]);
      await overrides.updateProgress?.(progress);
    },
    log: async (line) => {
      calls.push(['log', line]);
      if (overrides.log) return overrides.log(line);
      return ++lines;
    },
    updateData: async (data) => {
      calls.push(['updateData', data]);
      await overrides.updateData?.(data);
    },
    step: async (key, run) => {
      calls.push(['step', key]);
      if (overrides.step) return overrides.step(key, run);
      if (steps.has(key)) return steps.get(key);
      const value = await run();
      steps.set(key, value);
      return value;
    },
    streamWrite: async (chunk) => {
      calls.push(['streamWrite', chunk]);
    },
    streamEnd: async () => {
      calls.push(['streamEnd', undefined]);
    },
  };
}

/** A signal that never aborts. */
export const never: AbortSignal = new AbortController().signal;

/** Whether a process with this pid exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}

/**
 * Returns a factory of pools for fixture files. After each test every pool is closed, must have
 * no child left, and every child process any of them started must be gone (checked by pid).
 */
export function usePools(): (file: string, options: SandboxOptions) => SandboxPool {
  const pools: SandboxPool[] = [];
  const pids = new Set<number>();
  afterEach(async () => {
    const closing = pools.splice(0);
    await Promise.all(closing.map((pool) => pool.close()));
    for (const pool of closing) expect(pool.childIds).toEqual([]);
    for (const pid of pids) expect(isAlive(pid), `child process ${pid} is still alive`).toBe(false);
    pids.clear();
  });
  return (file, options) => {
    const pool = new SandboxPool(file.startsWith('/') || file.startsWith('file:') ? file : fixture(file), options);
    if (!options.useWorkerThreads) pool.on('spawned', (pid) => pids.add(pid));
    pools.push(pool);
    return pool;
  };
}

/** Counts the children a pool starts. */
export function countSpawns(pool: SandboxPool): { readonly count: number } {
  const counter = { count: 0 };
  pool.on('spawned', () => counter.count++);
  return counter;
}

/** Resolves with the next `event` of the pool (failing after `timeoutMs`). */
export async function next<K extends keyof SandboxPoolEvents>(
  pool: SandboxPool,
  event: K,
  timeoutMs = 10_000,
): Promise<SandboxPoolEvents[K]> {
  const args = await once(pool, event, { signal: AbortSignal.timeout(timeoutMs) });
  return args as SandboxPoolEvents[K];
}

/** Resolves with the rejection of `promise`, failing the test if it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  let value: unknown;
  try {
    value = await promise;
  } catch (error) {
    return error as Error & Record<string, unknown>;
  }
  throw new Error(`Expected a rejection, got ${JSON.stringify(value)}`);
}

/** A promise with its resolve function, for gates. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
