/**
 * Sandboxed processors: a processor file run in child processes (default) or worker threads, so
 * a CPU-bound or crashing processor cannot block or take down the worker.
 *
 * - `pool.ts`: {@link SandboxPool}, which starts, reuses, reclaims and ends children.
 * - `session.ts`: one run in one child (job methods, steps, abort signal).
 * - `child.ts`: starting and ending a process or a thread; `child-source.ts`: the code the
 *   child runs (kept as a string, so neither build has to find a file at run time).
 * - `protocol.ts`: the messages between parent and child; `errors.ts`: load, crash and
 *   termination errors.
 *
 * The processor file (ESM or CommonJS) exports `async (job, token, signal) => result` as its
 * default export or `module.exports`. In the child, `job` has the job's fields and
 * `updateProgress`, `log`, `updateData` and `step(key, fn)`, which call the worker's
 * {@link SandboxHooks}.
 */
export { SandboxPool, type SandboxPoolEvents } from './pool.js';
export type { SandboxHooks, SandboxJob, SandboxOptions } from './types.js';
export { SandboxCrashError, SandboxLoadError, SandboxTerminatedError, type ChildExit, type CrashReason, type EndReason } from './errors.js';
