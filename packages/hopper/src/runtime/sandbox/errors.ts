/**
 * The errors a sandbox run fails with when the processor itself did not throw: the file did not
 * load, the child crashed, or the pool ended the child. Each has a stable `code` and a message
 * that says what happened and what to do.
 *
 * (They are not `HopperError`s because the error-code enum lives in `job/errors.ts`; moving them
 * there would give them the cross-copy brand.)
 */
import { deserializeError, type SerializedError } from './protocol.js';

/** How a child ended, as observed by the parent. */
export interface ChildExit {
  /** Exit code, or null when ended by a signal. */
  code: number | null;
  /** The signal that ended a child process, or null. */
  signal: NodeJS.Signals | null;
  /** An uncaught error the child reported before exiting. */
  fatal?: SerializedError;
  /** The child ran out of heap (V8's fatal error, or a thread's `ERR_WORKER_OUT_OF_MEMORY`). */
  outOfMemory: boolean;
  /** The last lines a child process wrote to stderr ('' for threads, whose stderr is the parent's). */
  stderrTail: string;
}

/** Which child: `"child process 1234"` or `"worker thread 7"`. */
export interface ChildLabel {
  kind: 'process' | 'thread';
  id: number;
}

/** Why a child ended in the middle of a job. */
export type CrashReason = 'exit' | 'signal' | 'uncaught' | 'out-of-memory';

function where(child: ChildLabel): string {
  return child.kind === 'process' ? `child process ${child.id}` : `worker thread ${child.id}`;
}

function how(exit: ChildExit): string {
  return exit.signal !== null ? `signal ${exit.signal}` : `exit code ${exit.code}`;
}

/** The stderr line most worth showing: V8's fatal error if present, else the last line. */
function telling(stderrTail: string): string | undefined {
  const lines = stderrTail
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  return lines.find((l) => l.startsWith('FATAL ERROR')) ?? lines[lines.length - 1];
}

function stderrNote(exit: ChildExit): string {
  const line = telling(exit.stderrTail);
  return line === undefined ? '' : `; last stderr line: "${line}"`;
}

/** The run's child died before the processor settled. `reason` tells how. */
export class SandboxCrashError extends Error {
  readonly code = 'ERR_HOPPER_SANDBOX_CRASHED';
  readonly reason: CrashReason;
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Pid or thread id of the child that died. */
  readonly childId: number;

  constructor(jobId: string, child: ChildLabel, exit: ChildExit) {
    const replaced = 'The child is replaced for the next job.';
    let reason: CrashReason;
    let message: string;
    if (exit.outOfMemory) {
      reason = 'out-of-memory';
      message =
        `Job ${jobId}: its processor ran out of memory in ${where(child)} (${how(exit)}${stderrNote(exit)}). ` +
        `Reduce the job's memory use or raise the child's heap limit (the sandbox's maxMemoryMb). ${replaced}`;
    } else if (exit.fatal !== undefined) {
      reason = 'uncaught';
      message =
        `Job ${jobId}: ${where(child)} crashed with an uncaught ${exit.fatal.name}: ${exit.fatal.message}. It was thrown ` +
        `outside the processor's promise (a timer, an event handler, a promise nobody awaited), so the processor ` +
        `could not catch it; await or catch it inside the processor. The child ended with ${how(exit)}. ${replaced}`;
    } else if (exit.signal !== null) {
      reason = 'signal';
      message =
        `Job ${jobId}: ${where(child)} was killed by ${exit.signal} while running the processor (by the system's ` +
        `out-of-memory killer, or a kill from outside the worker?${stderrNote(exit)}). ${replaced}`;
    } else {
      reason = 'exit';
      message =
        `Job ${jobId}: ${where(child)} exited with code ${exit.code} before the processor finished (a call to ` +
        `process.exit() in the processor or a library it uses?${stderrNote(exit)}). ${replaced}`;
    }
    super(message, exit.fatal !== undefined ? { cause: deserializeError(exit.fatal) } : undefined);
    this.name = 'SandboxCrashError';
    this.reason = reason;
    this.exitCode = exit.code;
    this.signal = exit.signal;
    this.childId = child.id;
  }
}

/**
 * The processor file could not be loaded: missing, a syntax or top-level error, no function
 * exported, or the child died while loading it. `cause` holds the child's own error, if any.
 */
export class SandboxLoadError extends Error {
  readonly code = 'ERR_HOPPER_SANDBOX_LOAD';

  constructor(
    /** The processor file. */
    readonly file: string,
    /** What went wrong, without the advice. */
    readonly problem: string,
    private readonly loadRetryMs: number,
    cause?: Error,
  ) {
    super(
      `Cannot load the processor file ${file}: ${problem}. Fix the file or the path given to the Worker. Until it ` +
        `loads, every job fails with this error; the pool tries loading again at most once every ${loadRetryMs} ms.`,
      cause !== undefined ? { cause } : undefined,
    );
    this.name = 'SandboxLoadError';
  }

  /** The child reported the error it got loading the file. */
  static fromChild(file: string, error: SerializedError, loadRetryMs: number): SandboxLoadError {
    return new SandboxLoadError(file, `${error.name}: ${error.message}`, loadRetryMs, deserializeError(error));
  }

  /** The child died before it could report. */
  static fromExit(file: string, child: ChildLabel, exit: ChildExit, loadRetryMs: number): SandboxLoadError {
    const what = exit.outOfMemory
      ? `${where(child)} ran out of memory while loading it`
      : exit.fatal !== undefined
        ? `${where(child)} crashed while loading it with an uncaught ${exit.fatal.name}: ${exit.fatal.message}`
        : `${where(child)} ended with ${how(exit)} while loading it`;
    const cause = exit.fatal !== undefined ? deserializeError(exit.fatal) : undefined;
    return new SandboxLoadError(file, what + stderrNote(exit), loadRetryMs, cause);
  }

  /** The same error for another run, so that runs never share (and mutate) one error object. */
  copy(): SandboxLoadError {
    return new SandboxLoadError(this.file, this.problem, this.loadRetryMs, this.cause as Error | undefined);
  }
}

/** Why the pool itself ended a run's child. */
export type EndReason = 'terminated' | 'closed';

/**
 * The pool ended the run's child on purpose: `terminate(jobId)` (a processor that did not stop
 * after its signal) or `close()`.
 */
export class SandboxTerminatedError extends Error {
  readonly code = 'ERR_HOPPER_SANDBOX_TERMINATED';
  readonly reason: EndReason;

  constructor(jobId: string, reason: EndReason, child?: ChildLabel, exit?: ChildExit) {
    const ended = child === undefined ? 'before it started' : `by ending ${where(child)}${exit ? ` (${how(exit)})` : ''}`;
    super(
      reason === 'terminated'
        ? `Job ${jobId} was terminated ${ended}: its processor was still running after its signal was aborted ` +
            `(a timeout or a cancellation). Make the processor check signal.aborted or pass the signal to what it awaits.`
        : `Job ${jobId} was stopped ${ended} because the sandbox pool was closed while it ran.`,
    );
    this.name = 'SandboxTerminatedError';
    this.reason = reason;
  }
}
