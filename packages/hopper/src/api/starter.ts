/**
 * Starting a component (Queue, Worker, QueueEvents, FlowProducer): connect, check the server, set
 * up, with a start that failed tried again until it succeeds. A start that failed once used to be
 * kept for good (the component stayed broken after the server came back); now:
 * - the first attempt begins at once; a failed one is reported (once per kind of failure) and
 *   tried again in the background, after 0.5 s, doubling to 5 s, until one succeeds or the
 *   component closes; an error that retrying cannot fix (a Redis older than 7, a missing driver,
 *   a bad option) stops the retries;
 * - `ready()` (every public call, `waitUntilReady`) settles within the backend's start bound: it
 *   joins the attempt under way, or begins one, and rejects with that attempt's typed error or,
 *   past the bound, a ConnectionTimeoutError; once started, it fails at once while the backend is
 *   known unreachable;
 * - `whenStarted()` waits without a bound, for what must begin once the server answers (a
 *   Worker's processing, a QueueEvents reader); it rejects only when the component closes.
 * docs/limits-and-errors.md, Time bounds.
 */
import { safeTimeout, type SafeTimer } from '../clock/timers.js';
import { ClosedError, ConnectionError, ErrorCode, hopperErrorCode } from '../job/errors.js';

/** The first retry of a failed start, ms (doubling up to {@link START_RETRY_MAX_MS}). */
export const START_RETRY_FIRST_MS = 500;
/** The longest pause between two attempts of a failed start, ms. */
export const START_RETRY_MAX_MS = 5_000;

/** Errors a retry cannot fix: the start stops trying. */
const PERMANENT = new Set<string>([
  ErrorCode.UnsupportedRedis,
  ErrorCode.BackendDriverMissing,
  ErrorCode.InvalidOptions,
  ErrorCode.InvalidName,
  ErrorCode.Closed,
]);

export interface StarterOptions {
  /** One attempt: connect, check, set up. Idempotent (an attempt may run again after a failure). */
  attempt(): Promise<void>;
  /** The bound of `ready()`, ms. */
  timeoutMs(): number;
  /** The error of a `ready()` that waited `ms` for the attempt. */
  timeoutError(ms: number): Error;
  /** Whether calls must fail at once now (the backend is known unreachable), once started. */
  unavailable(): Error | undefined;
  /** For messages: `Queue "mail"`. */
  what: string;
  /** Reports a failed attempt (a new kind of failure only: not every retry of the same). */
  onError(err: unknown): void;
}

const RESOLVED = Promise.resolve();

export class Starter {
  private started = false;
  private stopped = false;
  /** The attempt under way. */
  private pending: Promise<void> | undefined;
  private retry: SafeTimer | undefined;
  private retryDelay = START_RETRY_FIRST_MS;
  /** Set when an error no retry can fix ended the attempts. */
  private permanent: Error | undefined;
  /** The message of the last failure reported (the same failure is not reported at every retry). */
  private reported: string | undefined;
  private readonly waiters = new Set<{ resolve: () => void; reject: (err: Error) => void }>();

  constructor(private readonly o: StarterOptions) {}

  /** Whether a start succeeded. */
  get isStarted(): boolean {
    return this.started;
  }

  /** Begins the first attempt. */
  begin(): void {
    void this.attempt().catch(() => undefined);
  }

  /**
   * Resolves once started; rejects within {@link StarterOptions.timeoutMs} with a typed error if the
   * attempt under way (or one begun now) fails or takes longer, or at once when stopped, when a
   * permanent error ended the attempts, or when the backend is known unreachable.
   */
  ready(): Promise<void> {
    // Started: calls work while the component closes (a Worker's jobs finish then); its owner refuses them once closed.
    if (this.started) {
      const down = this.o.unavailable();
      return down ? Promise.reject(down) : RESOLVED;
    }
    if (this.stopped) return Promise.reject(new ClosedError(`This ${this.o.what} is closed.`));
    if (this.permanent !== undefined) return Promise.reject(this.permanent);
    const attempt = this.attempt();
    const ms = this.o.timeoutMs();
    let timer: SafeTimer | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = safeTimeout(() => reject(this.o.unavailable() ?? this.o.timeoutError(ms)), ms, { ref: false });
    });
    return Promise.race([attempt, deadline]).finally(() => timer?.cancel());
  }

  /** Resolves once started, however long that takes; rejects when stopped or a permanent error ends the attempts. */
  whenStarted(): Promise<void> {
    if (this.started) return RESOLVED;
    if (this.stopped) return Promise.reject(new ClosedError(`This ${this.o.what} is closed.`));
    if (this.permanent !== undefined) return Promise.reject(this.permanent);
    return new Promise<void>((resolve, reject) => this.waiters.add({ resolve, reject }));
  }

  /**
   * Stops trying (the component closes): pending `whenStarted` calls reject with ClosedError, and so
   * does `ready()` if no start succeeded (once started, calls go on until the component is closed).
   */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.retry?.cancel();
    this.retry = undefined;
    this.settleWaiters(new ClosedError(`This ${this.o.what} was closed before it started.`));
  }

  /** The attempt under way, or a new one. */
  private attempt(): Promise<void> {
    if (this.started) return RESOLVED;
    if (this.pending) return this.pending;
    this.retry?.cancel();
    this.retry = undefined;
    const pending = this.run();
    this.pending = pending;
    void pending.then(
      () => (this.pending = undefined),
      () => (this.pending = undefined),
    );
    return pending;
  }

  private async run(): Promise<void> {
    try {
      await this.o.attempt();
    } catch (raw) {
      const err = this.typed(raw);
      if (this.stopped) throw err;
      if (PERMANENT.has(hopperErrorCode(err) ?? '')) {
        this.permanent = err;
        this.settleWaiters(err);
      } else {
        this.scheduleRetry();
      }
      if (err.message !== this.reported) {
        this.reported = err.message;
        this.o.onError(err);
      }
      throw err;
    }
    if (this.stopped) return;
    this.started = true;
    this.retry?.cancel();
    this.retry = undefined;
    this.settleWaiters();
  }

  private scheduleRetry(): void {
    if (this.retry || this.stopped) return;
    const delay = this.retryDelay;
    this.retryDelay = Math.min(delay * 2, START_RETRY_MAX_MS);
    // Unref'd: a component waiting to start does not keep the process alive (a running Worker does).
    this.retry = safeTimeout(
      () => {
        this.retry = undefined;
        void this.attempt().catch(() => undefined);
      },
      delay,
      { ref: false },
    );
  }

  /** A start's failure as a typed error: Hopper's own as they are, anything else a ConnectionError. */
  private typed(err: unknown): Error {
    if (hopperErrorCode(err) !== undefined && err instanceof Error) return err;
    const message = err instanceof Error ? err.message : String(err);
    return new ConnectionError(`${this.o.what} could not start: ${message}. Hopper keeps trying and recovers by itself.`, { cause: err });
  }

  private settleWaiters(err?: Error): void {
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const w of waiters) {
      if (err === undefined) w.resolve();
      else w.reject(err);
    }
  }
}
