/**
 * Shutdown: how a worker stops holding jobs. Graceful (`close()`): it finishes every job it
 * claimed, including the jobs of a claim whose reply arrives after close began, and records
 * their results. Forced (`close(true)`), or once the close deadline (`closeTimeout`) passes: the
 * jobs it still holds are released for another worker at once (releaseJobs, fenced by token and
 * attempt; a cancelled one ends failed as cancelled), their processors aborted, and jobs that
 * arrive later are released unstarted. Never waits past the deadline, plus a short grace for the
 * release call itself.
 */
import type { QueueBackend, Retention } from '../backend/backend.js';
import type { Clock } from '../clock/clock.js';
import { safeTimeout, type SafeTimer } from '../clock/timers.js';
import { CloseTimeoutError } from '../job/errors.js';
import type { Claim, Claims } from './claims.js';
import type { Dispatcher } from './dispatcher.js';
import type { Executor } from './executor.js';

export interface ShutdownOptions {
  backend: QueueBackend;
  clock: Clock;
  claims: Claims;
  executor: Executor;
  dispatcher: Dispatcher;
  failKeep: Retention;
  queueName: string;
  onError(err: unknown): void;
}

/** After the deadline, how long the release call (and closing the connections) may take, ms. */
export const RELEASE_GRACE_MS = 1000;

/** Ids named in an error message (the error's `jobIds` has them all). */
const NAMED_IDS = 20;

function delay(ms: number): { promise: Promise<'timeout'>; cancel(): void } {
  let timer: SafeTimer | undefined;
  const promise = new Promise<'timeout'>((resolve) => {
    // A closeTimeout past 2^31-1 ms is chained, not fired at once (clock/timers.ts).
    timer = safeTimeout(() => resolve('timeout'), ms, { ref: false });
  });
  return { promise, cancel: () => timer?.cancel() };
}

export class Shutdown {
  /** Set once held jobs are given back: jobs claimed from now on are released unstarted. */
  releasing = false;
  private readonly pending = new Set<Promise<void>>();
  private arrived: Claim[] = [];

  constructor(private readonly o: ShutdownOptions) {}

  /**
   * Resolves once the worker holds nothing: no call in flight, no job running, no result waiting
   * to be recorded. A reply that brings jobs while waiting adds them to what is waited for.
   */
  async quiesce(): Promise<void> {
    for (;;) {
      await this.o.dispatcher.whenSettled();
      if (this.o.claims.size === 0) return;
      await this.o.claims.whenEmpty();
    }
  }

  /**
   * Releases held jobs now (all those not being recorded, or `only`): aborts their processors
   * (their results will not be recorded) and gives the jobs back in one call per 500. Resolves
   * with their ids once Redis answered (or the call failed: the jobs are then rescued when their
   * locks expire).
   */
  release(reason: Error, only?: Claim[]): Promise<string[]> {
    const list = (only ?? this.o.claims.unsettled()).filter((claim) => !claim.releasing);
    if (list.length === 0) return Promise.resolve([]);
    for (const claim of list) {
      claim.releasing = true;
      this.o.executor.abort(claim.token, reason, true, claim.job.id);
    }
    const ids = list.map((claim) => claim.job.id as string);
    // Each job goes back to the head of the queue: sent last first, they keep their claim order there.
    const back = list.map((claim) => ({ id: claim.job.id as string, token: claim.token, attempt: claim.attempt, started: claim.started }));
    back.reverse();
    const call = this.o.backend
      .releaseJobs(back, this.o.failKeep, this.o.clock.backendNow())
      .then(
        () => undefined,
        (err: unknown) => this.o.onError(err),
      )
      .finally(() => {
        for (const claim of list) this.o.claims.drop(claim.token);
        this.pending.delete(call);
      });
    this.pending.add(call);
    return call.then(() => ids);
  }

  /** Releases `claim` unstarted, batched with the other jobs of the same reply (one call). */
  releaseUnstarted(claim: Claim): void {
    this.arrived.push(claim);
    if (this.arrived.length > 1) return;
    queueMicrotask(() => {
      const batch = this.arrived;
      this.arrived = [];
      void this.release(new Error('The worker was closing: the job was released unstarted.'), batch);
    });
  }

  /**
   * Stops holding jobs within `timeout` ms: gracefully (waits for them) or, with `force`,
   * releasing them at once. Returns the CloseTimeoutError to reject close with, if the deadline
   * passed.
   */
  async stop(force: boolean, timeout: number): Promise<CloseTimeoutError | undefined> {
    const deadline = delay(timeout);
    if (force) {
      this.releasing = true;
      void this.release(new Error(`Worker of queue "${this.o.queueName}" closed with force: the job was released for another worker.`));
    }
    const outcome = await Promise.race([this.quiesce().then(() => 'done' as const), deadline.promise]);
    deadline.cancel();
    if (outcome === 'done') return undefined;

    this.releasing = true;
    const stuck = this.o.claims.unsettled();
    const ids = stuck.map((claim) => claim.job.id as string);
    const unrecorded = this.o.claims.size - stuck.length;
    const reason = new CloseTimeoutError(
      `Worker of queue "${this.o.queueName}" reached closeTimeout (${timeout} ms) before this job finished: it was released for another worker.`,
      ids,
    );
    this.release(reason, stuck).catch(() => undefined);
    // The release gets a short grace: Redis may be what is not answering.
    const grace = delay(RELEASE_GRACE_MS);
    await Promise.race([Promise.all(this.pending), grace.promise]);
    grace.cancel();
    const named = ids.slice(0, NAMED_IDS).join(', ') + (ids.length > NAMED_IDS ? `, and ${ids.length - NAMED_IDS} more` : '');
    return new CloseTimeoutError(
      `Worker of queue "${this.o.queueName}" did not finish closing within closeTimeout (${timeout} ms).` +
        (ids.length > 0
          ? ` ${ids.length} job(s) still running were released for another worker and their processors aborted: ${named}.`
          : '') +
        (unrecorded > 0
          ? ` ${unrecorded} finished job(s) could not be recorded (Redis did not answer): they stay active until their lock expires, then are retried.`
          : '') +
        ' Raise closeTimeout, or make the processor honour its abort signal, to close without this.',
      ids,
    );
  }
}
