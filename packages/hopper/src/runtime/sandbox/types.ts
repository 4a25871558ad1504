/**
 * The sandbox pool's options and the shapes it exchanges with the worker runtime.
 */
import type { Clock } from '../../clock/clock.js';

/** How a {@link SandboxPool} runs processors. */
export interface SandboxOptions {
  /**
   * Run processors in worker threads instead of child processes. Default false: child processes
   * (`node -e <bootstrap> <file>` with an IPC channel), which isolate memory and crashes fully.
   * Threads start faster and share the process's memory limit.
   */
  useWorkerThreads?: boolean;
  /** The most children alive at once: the worker's concurrency (one job per child at a time). */
  maxChildren: number;
  /**
   * Children kept alive when idle. Default 0: a quiet worker holds no children, and the first job
   * after a quiet spell pays the child's start-up (tens of ms). The pool starts children only to
   * run jobs; this is the floor idle reclaim stops at, not a number started in advance.
   */
  minChildren?: number;
  /** An idle child above `minChildren` is ended after this long without a job. Default 30,000 ms. */
  idleTimeoutMs?: number;
  /**
   * When ending a child process: SIGTERM, then SIGKILL after this long. Default 5,000 ms.
   * A worker thread is stopped at once (`worker.terminate()`), so this does not apply to threads.
   */
  killGraceMs?: number;
  /**
   * After the processor file fails to load, runs fail at once with the load error for this long
   * without starting a child; the first run after it tries again (the file may have been fixed).
   * Default 5,000 ms.
   */
  loadRetryMs?: number;
  /**
   * Heap limit of each child in MB (`--max-old-space-size` for a process,
   * `resourceLimits.maxOldGenerationSizeMb` for a thread). Default: Node's own limit.
   */
  maxMemoryMb?: number;
  /** Clock for the idle-reclaim and load-retry timers (tests pass a `FakeClock`). Default: system clock. */
  clock?: Clock;
}

/** The job as the child's processor sees it (plain JSON; the child adds the methods). */
export interface SandboxJob {
  id: string;
  name: string;
  data: unknown;
  opts: object;
  attemptsMade: number;
  attemptsStarted: number;
  timestamp: number;
  processedOn?: number;
  delay: number;
  priority: number;
  queueName: string;
  /** The attempt's lock token, also passed to the processor as its second argument. */
  token: string;
  progress: unknown;
}

/**
 * The parent's side of the child's job methods. The worker supplies them, already fenced to the
 * attempt; a rejection is re-thrown in the child with the same name and message.
 */
export interface SandboxHooks {
  updateProgress(progress: unknown): Promise<void>;
  /** Appends a log line; resolves with the number of lines. */
  log(line: string): Promise<number>;
  updateData(data: unknown): Promise<void>;
  /**
   * `job.step(key, fn)` in the child. The hook decides: if the step has a stored result it
   * resolves with it without calling `run`; otherwise it calls `run()`, which asks the child to
   * run `fn` and resolves with `fn`'s result (JSON), stores it, and resolves with it. Whatever the
   * hook resolves with is what `job.step` resolves with in the child; a rejection (of `fn` or of
   * the hook) rejects `job.step` with the same name and message.
   */
  step(key: string, run: () => Promise<unknown>): Promise<unknown>;
  /** `job.stream.write(chunk)` in the child: appended to the job's output stream, fenced to the attempt. */
  streamWrite(chunk: unknown): Promise<void>;
  /** `job.stream.end()` in the child. */
  streamEnd(): Promise<void>;
}
