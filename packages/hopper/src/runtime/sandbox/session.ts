/**
 * One run of the processor in one child: sends the job, answers the child's job-method calls
 * with the worker's hooks (including the two-way `step` exchange and `job.stream` writes), forwards the abort signal,
 * and settles with the processor's result, its error, or the child's crash.
 */
import {
  deserializeError,
  serializeError,
  serializeReason,
  type ChildMessage,
  type ParentMessage,
  type RequestMessage,
} from './protocol.js';
import type { SandboxHooks, SandboxJob } from './types.js';

/** The messages of a run, as the session receives them. */
export type RunMessage = Extract<ChildMessage, { runId: number }>;

interface Waiter {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

export class RunSession {
  /** Settles with the processor's return value, or rejects with its error or the child's end. */
  readonly result: Promise<unknown>;
  private settled = false;
  private resolveResult!: (value: unknown) => void;
  private rejectResult!: (error: Error) => void;
  /** Step functions the parent asked the child to run, by the id of the child's `step` request. */
  private readonly stepRuns = new Map<number, Waiter>();

  constructor(
    readonly runId: number,
    private readonly job: SandboxJob,
    private readonly hooks: SandboxHooks,
    private readonly signal: AbortSignal,
    private readonly send: (message: ParentMessage) => void,
  ) {
    this.result = new Promise<unknown>((resolve, reject) => {
      this.resolveResult = resolve;
      this.rejectResult = reject;
    });
  }

  /** The id of the run's job. */
  get jobId(): string {
    return this.job.id;
  }

  /** Sends the job to the child and starts forwarding the abort signal. */
  start(): void {
    const aborted = this.signal.aborted ? serializeReason(this.signal.reason) : undefined;
    this.send({ type: 'run', runId: this.runId, job: this.job, ...(aborted ? { aborted } : {}) });
    if (!aborted) this.signal.addEventListener('abort', this.onAbort, { once: true });
  }

  private readonly onAbort = (): void => {
    if (!this.settled) this.send({ type: 'abort', runId: this.runId, reason: serializeReason(this.signal.reason) });
  };

  /** Handles a message of this run. Returns true when the run is over (the child is free again). */
  handle(message: RunMessage): boolean {
    switch (message.type) {
      case 'request':
        this.answer(message);
        return false;
      case 'step-ran': {
        const waiter = this.stepRuns.get(message.id);
        if (!waiter) return false;
        this.stepRuns.delete(message.id);
        if (message.ok) waiter.resolve(message.value);
        else waiter.reject(deserializeError(message.error));
        return false;
      }
      case 'done':
        if (message.ok) this.settle(() => this.resolveResult(message.value));
        else this.settle(() => this.rejectResult(deserializeError(message.error)));
        return true;
    }
  }

  /** Ends the run with `error` (the child died or was ended). */
  fail(error: Error): void {
    this.settle(() => this.rejectResult(error));
  }

  private settle(apply: () => void): void {
    if (this.settled) return;
    this.settled = true;
    this.signal.removeEventListener('abort', this.onAbort);
    // A step the child can no longer run fails, so the parent's step hook settles too.
    for (const waiter of this.stepRuns.values())
      waiter.reject(new Error(`Job ${this.job.id}: the step could not run because its run ended.`));
    this.stepRuns.clear();
    apply();
  }

  /** Calls the hook for a job method and sends its outcome back to the child. */
  private answer(request: RequestMessage): void {
    const id = request.id;
    new Promise<unknown>((resolve) => resolve(this.callHook(request))).then(
      (value) => this.send({ type: 'reply', id, ok: true, value }),
      (error: unknown) => this.send({ type: 'reply', id, ok: false, error: serializeError(error) }),
    );
  }

  private callHook(request: RequestMessage): Promise<unknown> {
    switch (request.method) {
      case 'updateProgress':
        return this.hooks.updateProgress(request.progress);
      case 'log':
        return this.hooks.log(request.line);
      case 'updateData':
        return this.hooks.updateData(request.data);
      case 'step':
        return this.hooks.step(request.key, () => this.runStepInChild(request.id));
      case 'streamWrite':
        // Called in the order the child's writes arrive: the job's stream stores them in that order.
        return this.hooks.streamWrite(request.chunk);
      case 'streamEnd':
        return this.hooks.streamEnd();
    }
  }

  /** Asks the child to run the function of its `step` request `id`; resolves with its result. */
  private runStepInChild(id: number): Promise<unknown> {
    if (this.settled) return Promise.reject(new Error(`Job ${this.job.id}: the step could not run because its run ended.`));
    return new Promise((resolve, reject) => {
      this.stepRuns.set(id, { resolve, reject });
      this.send({ type: 'step-run', runId: this.runId, id });
    });
  }
}
