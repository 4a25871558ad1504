/**
 * SandboxPool: runs a processor file in child processes (or worker threads), one job per child
 * at a time, at most `maxChildren` at once.
 *
 * Children are started only to run jobs, reused while jobs keep coming, and ended when idle for
 * `idleTimeoutMs` (down to `minChildren`). A child that dies mid-job fails that run and is
 * simply not reused; the next run starts a fresh one.
 *
 * Load failures do not cause a spawn storm. Until a child has loaded the file, one child at a
 * time tries (the probe) and the other runs wait for it. When loading fails, that run and every
 * waiting run fail with the load error, and so does every run for the next `loadRetryMs`
 * (default 5 s) without starting a child; the first run after that tries again. So a broken
 * file costs at most one child start per `loadRetryMs`, and a fixed file is picked up.
 */
import { EventEmitter } from 'node:events';
import type { ClockTimer } from '../../clock/clock.js';
import { startChild, type ChildHandle } from './child.js';
import { SandboxCrashError, SandboxLoadError, SandboxTerminatedError, type ChildExit, type EndReason } from './errors.js';
import { resolveSandboxOptions, type ResolvedSandboxOptions } from './options.js';
import { serializeError, type ChildMessage } from './protocol.js';
import { RunSession, type RunMessage } from './session.js';
import type { SandboxHooks, SandboxJob, SandboxOptions } from './types.js';

interface PoolChild {
  readonly handle: ChildHandle;
  /** starting: loading the file; idle: waiting for a job; busy: running one; ending: being ended. */
  state: 'starting' | 'idle' | 'busy' | 'ending';
  /** Settles when the child has loaded the file (or could not). */
  readonly ready: Promise<void>;
  /** `ready` has not settled yet. */
  loading: boolean;
  markReady(): void;
  markFailed(error: Error): void;
  session?: RunSession;
  idleTimer?: ClockTimer;
  /** Set when the pool ends the child on purpose: its run fails with this reason, not as a crash. */
  endReason?: EndReason;
}

/** A call to `run`, from before it has a child until it settles. */
interface PendingRun {
  readonly job: SandboxJob;
  child?: PoolChild;
  /** Set when the run was terminated or the pool closed before the run had a child. */
  ended?: Error;
  cancel(error: Error): void;
}

/** The pool's events, for tests and the dashboard. */
export interface SandboxPoolEvents {
  /** A child was started (pid or thread id). */
  spawned: [id: number];
  /** A child has ended and is gone (for a process: reaped, its pid no longer exists). */
  exited: [id: number, exit: ChildExit];
}

const noop = (): void => undefined;

/**
 * Runs a processor file in child processes or worker threads.
 *
 * @example
 * const pool = new SandboxPool('/app/processor.js', { maxChildren: 4 });
 * const result = await pool.run(job, hooks, controller.signal);
 * await pool.close();
 */
export class SandboxPool extends EventEmitter<SandboxPoolEvents> {
  private readonly o: ResolvedSandboxOptions;

  private readonly children = new Set<PoolChild>();
  /** Idle children, most recently used last (taken first, so the others can age out). */
  private readonly idle: PoolChild[] = [];
  private readonly runs = new Set<PendingRun>();
  private waiters: (() => void)[] = [];
  private runSeq = 0;
  /** A child has loaded the file since the last load failure: children may start in parallel. */
  private loaded = false;
  /** The start of a child while the file is not known to load; others wait for its outcome. */
  private probe: Promise<void> | undefined;
  /** The last load error, while runs fail fast with it (for `loadRetryMs`). */
  private loadFailure: SandboxLoadError | undefined;
  private loadRetryTimer: ClockTimer | undefined;
  private closed = false;
  private closing: Promise<void> | undefined;

  /**
   * @param processorFile the processor file (ESM or CommonJS), as a path (relative paths resolve
   *   against the current directory) or a `file:` URL. Its default export (`module.exports`) is
   *   called as `processor(job, token, signal)`. It is not read until the first run.
   */
  constructor(processorFile: string | URL, options: SandboxOptions) {
    super();
    this.o = resolveSandboxOptions(processorFile, options);
  }

  /** Pids (or thread ids) of the live children, including those starting or being ended. */
  get childIds(): number[] {
    return [...this.children].map((c) => c.handle.label.id);
  }

  /**
   * Runs the processor on `job` in a child. Resolves with its return value (as JSON); rejects
   * with the processor's error (a plain `Error` with the original name, message, stack and
   * `code`), a {@link SandboxLoadError}, a {@link SandboxCrashError} (the child died: `reason`
   * says how), or a {@link SandboxTerminatedError} (`terminate` or `close`). When `signal`
   * aborts, the processor's signal aborts with the same reason (name and message).
   */
  async run(job: SandboxJob, hooks: SandboxHooks, signal: AbortSignal): Promise<unknown> {
    let cancel: (error: Error) => void = noop;
    const cancelled = new Promise<never>((_, reject) => (cancel = reject));
    cancelled.catch(noop);
    const run: PendingRun = {
      job,
      cancel: (error) => {
        run.ended ??= error;
        cancel(error);
        this.wake();
      },
    };
    this.runs.add(run);
    try {
      // Terminate and close end a run that is still waiting for a child at once.
      const child = await Promise.race([this.acquire(run), cancelled]);
      if (run.ended) {
        this.release(child);
        throw run.ended;
      }
      run.child = child;
      const session = new RunSession(++this.runSeq, job, hooks, signal, (message) => child.handle.send(message));
      child.session = session;
      session.start();
      return await session.result;
    } finally {
      this.runs.delete(run);
    }
  }

  /**
   * Ends the child running job `jobId` now (a process: SIGTERM, then SIGKILL after
   * `killGraceMs`; a thread: at once), for a processor that ignores its aborted signal. Its
   * `run` rejects with a {@link SandboxTerminatedError} once the child is gone; this resolves
   * then too. A run still waiting for a child is rejected at once. With `token`, only that
   * attempt's run (another attempt of the job may run beside it).
   */
  async terminate(jobId: string, token?: string): Promise<void> {
    const ends: Promise<unknown>[] = [];
    for (const run of this.runs) {
      if (run.job.id !== jobId || (token !== undefined && run.job.token !== token)) continue;
      if (run.child === undefined) run.cancel(new SandboxTerminatedError(jobId, 'terminated'));
      else ends.push(this.endChild(run.child, 'terminated'));
    }
    await Promise.all(ends);
  }

  /**
   * Ends every child (a process: SIGTERM, then SIGKILL after `killGraceMs`) and resolves when
   * all are gone. Runs still going reject with a {@link SandboxTerminatedError}; later runs
   * reject at once. Call it after the worker's running jobs have settled for a graceful close.
   */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.closed = true;
    this.loadRetryTimer?.cancel();
    for (const run of this.runs) if (run.child === undefined) run.cancel(new SandboxTerminatedError(run.job.id, 'closed'));
    this.wake();
    this.closing = Promise.all([...this.children].map((c) => this.endChild(c, 'closed'))).then(noop);
    return this.closing;
  }

  /** Finds a child for `run`: an idle one, a new one, or the next one freed. */
  private async acquire(run: PendingRun): Promise<PoolChild> {
    for (;;) {
      if (run.ended) throw run.ended;
      if (this.closed) throw new SandboxTerminatedError(run.job.id, 'closed');
      const idle = this.idle.pop();
      if (idle) {
        idle.idleTimer?.cancel();
        idle.idleTimer = undefined;
        return this.claim(idle, run);
      }
      if (this.loadFailure) throw this.loadFailure.copy();
      if (this.probe) {
        await this.probe;
        continue;
      }
      if (this.activeCount() < this.o.maxChildren) {
        const child = this.spawn();
        if (!this.loaded) this.probe = child.ready.then(noop, noop).then(() => (this.probe = undefined));
        try {
          await child.ready;
        } catch (error) {
          // Ended by close() or terminate() while starting: the checks above say so.
          if (this.closed || run.ended) continue;
          throw error;
        }
        return this.claim(child, run);
      }
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** Hands `child` to `run`, unless the run ended meanwhile (then the child goes back). */
  private claim(child: PoolChild, run: PendingRun): PoolChild {
    child.state = 'busy';
    if (run.ended) {
      this.release(child);
      throw run.ended;
    }
    return child;
  }

  /** Makes a child available again after its run; idle children above the minimum age out. */
  private release(child: PoolChild): void {
    child.session = undefined;
    if (child.state === 'ending' || this.closed) return;
    child.state = 'idle';
    this.idle.push(child);
    if (this.activeCount() > this.o.minChildren) child.idleTimer = this.o.clock.setTimeout(() => this.reclaim(child), this.o.idleTimeoutMs);
    this.wake();
  }

  private reclaim(child: PoolChild): void {
    child.idleTimer = undefined;
    if (child.state !== 'idle' || this.activeCount() <= this.o.minChildren) return;
    void this.endChild(child, undefined);
  }

  /** Ends a child on purpose; resolves when it is gone. */
  private endChild(child: PoolChild, reason: EndReason | undefined): Promise<ChildExit> {
    if (reason !== undefined) child.endReason ??= reason;
    if (child.state === 'idle') this.idle.splice(this.idle.indexOf(child), 1);
    child.idleTimer?.cancel();
    child.idleTimer = undefined;
    child.state = 'ending';
    return child.handle.end(this.o.killGraceMs);
  }

  /** Children that count against `maxChildren`: all but those being ended. */
  private activeCount(): number {
    let n = 0;
    for (const child of this.children) if (child.state !== 'ending') n++;
    return n;
  }

  private spawn(): PoolChild {
    let markReady: () => void = noop;
    let markFailed: (error: Error) => void = noop;
    const ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      markFailed = reject;
    });
    // `child` is assigned before any message can arrive (messages come on later ticks).
    const child: PoolChild = {
      handle: startChild(this.o.file, this.o, (message) => this.onMessage(child, message)),
      state: 'starting',
      ready,
      loading: true,
      markReady,
      markFailed,
    };
    this.children.add(child);
    this.emit('spawned', child.handle.label.id);
    void child.handle.exited.then((exit) => this.onExit(child, exit));
    return child;
  }

  private onMessage(child: PoolChild, message: ChildMessage): void {
    switch (message.type) {
      case 'ready':
        // A child being ended (close() during its start) is settled by its exit instead.
        if (!child.loading || child.state === 'ending') return;
        child.loading = false;
        this.loaded = true;
        child.markReady();
        return;
      case 'load-failed':
        if (!child.loading) return;
        child.loading = false;
        child.markFailed(this.recordLoadFailure(SandboxLoadError.fromChild(this.o.file, message.error, this.o.loadRetryMs)));
        void this.endChild(child, undefined);
        return;
      case 'fatal':
        return; // the handle keeps it for the exit report
      default:
        this.onRunMessage(child, message);
    }
  }

  private onRunMessage(child: PoolChild, message: RunMessage): void {
    const session = child.session;
    if (session !== undefined && session.runId === message.runId) {
      if (session.handle(message)) this.release(child);
      return;
    }
    // A call from a run that already ended (a timer the processor left behind).
    if (message.type === 'request') {
      const error = new Error(
        `job.${message.method}() was called after the processor had returned, so it was ignored. Await every job call inside the processor.`,
      );
      child.handle.send({ type: 'reply', id: message.id, ok: false, error: serializeError(error) });
    }
  }

  private onExit(child: PoolChild, exit: ChildExit): void {
    this.children.delete(child);
    const idleAt = this.idle.indexOf(child);
    if (idleAt >= 0) this.idle.splice(idleAt, 1);
    child.idleTimer?.cancel();
    const label = child.handle.label;
    if (child.loading) {
      child.loading = false;
      child.markFailed(
        child.endReason !== undefined
          ? new Error(`The sandbox pool ended ${label.kind} ${label.id} while it was starting (${child.endReason}).`)
          : this.recordLoadFailure(SandboxLoadError.fromExit(this.o.file, label, exit, this.o.loadRetryMs)),
      );
    }
    child.state = 'ending';
    const session = child.session;
    child.session = undefined;
    if (session !== undefined) {
      const jobId = session.jobId;
      session.fail(
        child.endReason !== undefined
          ? new SandboxTerminatedError(jobId, child.endReason, label, exit)
          : new SandboxCrashError(jobId, label, exit),
      );
    }
    this.emit('exited', label.id, exit);
    this.wake();
  }

  /** Makes runs fail fast with `error` for `loadRetryMs`. */
  private recordLoadFailure(error: SandboxLoadError): SandboxLoadError {
    this.loaded = false;
    this.loadFailure = error;
    this.loadRetryTimer?.cancel();
    this.loadRetryTimer = this.o.clock.setTimeout(() => {
      this.loadFailure = undefined;
      this.loadRetryTimer = undefined;
    }, this.o.loadRetryMs);
    this.wake();
    return error;
  }

  /** Lets every run waiting for a child look again. */
  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}
