/**
 * Queue: adds jobs and manages a queue, with BullMQ's API. Reads are in QueueGetters; operations on
 * one job or run by id (cancel, progress, logs, runs) in QueueJobOps.
 *
 * @example
 * const queue = new Queue('mail', { connection: { host: '127.0.0.1', port: 6379 } });
 * await queue.add('welcome', { userId: 'u1' }, { jobId: 'welcome:u1', attempts: 3 });
 */
import { randomBytes } from 'node:crypto';
import type { AddCharge, NewJob } from '../backend/backend.js';
import { tenantOf, validateTenant, type BudgetOptions, type BudgetUse } from './budget.js';
import { checkFlowSlots, explainRefusal, toFlowNode } from './flows.js';
import { GroupMaxSizeExceededError, InvalidDataError, InvalidOptionsError } from '../job/errors.js';
import { Job } from '../job/job.js';
import { validateJobName, validateJobOptions, type JobsOptions } from '../job/options.js';
import { checkDeadLetterRoute } from '../job/dead-letter-route.js';
import { toNewJob } from '../job/new-job.js';
import type { QueueBaseOptions } from './queue-base.js';
import { QueueJobOps } from './queue-job-ops.js';
import { SpanKind, TelemetryAttributes, type Telemetry } from '../telemetry/telemetry.js';
import { trace } from '../telemetry/trace.js';
import { replayDeadLetters, type ReplayDeadLettersOptions, type ReplayResult } from './dead-letters.js';

import { BULK_JOB, checkArgument } from '../validation/arguments.js';
import { OutputHub, readOutput, type ReadStreamOptions, type StreamChunk } from './output-reader.js';
import { showValue } from '../validation/kit.js';

export type { ReplayDeadLettersOptions, ReplayResult } from './dead-letters.js';
export type { ReadStreamOptions, StreamChunk } from './output-reader.js';

/** Options of a Queue. */
export interface QueueOptions extends QueueBaseOptions {
  /** Options merged into every job added through this queue (job options win). */
  defaultJobOptions?: JobsOptions;
  /** The events stream cap, as in BullMQ: `{ events: { maxLen } }` (default 10,000 events). */
  streams?: { events?: { maxLen?: number } };
  /**
   * Backoff type names your workers' `settings.backoffStrategy` handles, besides 'fixed',
   * 'exponential' and 'custom'. Other names are refused at add, so a typo cannot fail jobs later.
   */
  backoffTypes?: string[];
  /**
   * The dead-letter queue for jobs added here that fail for good (a default for the job option
   * `deadLetter`). In Redis Cluster, both queues must share a hash tag (a `{tag}` in the prefix).
   */
  deadLetter?: { queue: string };
  /**
   * When a child of a job in this queue fails for good and sets no failure option of its own
   * (failParentOnFailure, continueParentOnFailure, ...), fail the parent too. Default: the parent
   * keeps waiting (as in BullMQ), with the failure recorded (`getFailedChildrenValues()`) and a
   * `child-failed` event; retrying the child unblocks it. Stored on the queue, so it applies to
   * every producer; leave it unset in clients that should not change it.
   */
  failParentOnChildFailure?: boolean;
  /**
   * A telemetry adapter (BullMQ's interface; `bullmq-otel` works): adds are traced as producer
   * spans, and their context travels with each job to the worker's processing span.
   */
  telemetry?: Telemetry;
  /**
   * A budget per tenant (docs/budgets.md): adds with a `cost` option are charged to the tenant
   * `key(data)` and refused with `BudgetExceededError` past `limit` per sliding `window` ms.
   * Redis backend only. Default: none.
   */
  // `any`: QueueOptions is not generic (BullMQ's shape), so `key` cannot name the queue's data type.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  budget?: BudgetOptions<any>;
}

/** A job to add in `addBulk`. */
export interface BulkJob<DataType, NameType extends string> {
  name: NameType;
  data: DataType;
  opts?: JobsOptions;
}

/** Default cap of the events stream. */
export const DEFAULT_MAX_EVENTS = 10_000;

/** Most single adds sent together in one call. */
const MAX_ADDS_PER_CALL = 500;

/** An add waiting for its call: validated and serialised already. */
interface PendingAdd<DataType, ResultType, NameType extends string> {
  name: NameType;
  data: DataType;
  merged: JobsOptions;
  prepared: NewJob;
  /** The tenant its cost is charged to ('' = none). */
  tenant: string;
  resolve?: (job: Job<DataType, ResultType, NameType>) => void;
  reject?: (err: unknown) => void;
}

// `any` defaults keep BullMQ's generic signature (`Queue` alone accepts any data).
/* eslint-disable @typescript-eslint/no-explicit-any */
export class Queue<DataType = any, ResultType = any, NameType extends string = string> extends QueueJobOps<DataType, ResultType, NameType> {
  /* eslint-enable @typescript-eslint/no-explicit-any */
  /** The options this queue was created with. */
  override readonly opts: QueueOptions;
  /** Options merged into every job added here. */
  defaultJobOptions: JobsOptions;
  private readonly producerId = randomBytes(6).toString('base64url');
  protected readonly backoffTypes: readonly string[];
  private seq = 0;
  private inFlight = 0;
  private outputHub: OutputHub | undefined;
  private readonly pendingAdds: PendingAdd<DataType, ResultType, NameType>[] = [];

  constructor(name: string, opts: QueueOptions = {}) {
    super(name, opts, 'command');
    this.opts = opts;
    this.backoffTypes = opts.backoffTypes ?? [];
    this.defaultJobOptions = { ...opts.defaultJobOptions };
    if (opts.deadLetter && !this.defaultJobOptions.deadLetter) this.defaultJobOptions.deadLetter = opts.deadLetter;
  }

  /**
   * A tenant's use of this queue's `budget`: the costs charged to it in the last `window` ms
   * (estimates at add, corrected by `job.reportCost`). Throws if the queue has no budget.
   * @example const { use, remaining } = await queue.getBudget('acme');
   */
  async getBudget(tenant: string): Promise<BudgetUse> {
    const budget = this.opts.budget;
    if (!budget)
      throw new InvalidOptionsError('getBudget: this Queue has no budget option; create it with { budget: { key, limit, window } }.');
    validateTenant(tenant, 'getBudget(tenant)');
    await this.ready();
    const use = await this.backend.getBudgetUse(tenant, budget.window, this.clock.backendNow());
    return { tenant, use, limit: budget.limit, window: budget.window, remaining: Math.max(budget.limit - use, 0) };
  }

  protected override async init(): Promise<void> {
    const childFailure =
      this.opts.failParentOnChildFailure === undefined ? undefined : this.opts.failParentOnChildFailure ? 'fail' : 'wait';
    await this.initQueue(this.opts.streams?.events?.maxLen ?? DEFAULT_MAX_EVENTS, childFailure);
  }

  /**
   * Adds a job. With a `jobId` that already exists, nothing is written: the existing job is
   * returned and a `duplicated` event is emitted. With `deduplication`, an add whose id is taken
   * returns the job that holds it and emits `deduplicated`. With `repeat` (BullMQ 4/5's legacy
   * repeatable job), it creates or updates the job scheduler named by the repeat key and returns
   * its first occurrence (docs/schedules.md, "Legacy repeatable jobs").
   *
   * @example await queue.add('resize', { path: '/img/1.png' }, { attempts: 3, backoff: { type: 'exponential', delay: 1000 } });
   */
  add(name: NameType, data: DataType, opts?: JobsOptions): Promise<Job<DataType, ResultType, NameType>> {
    if (opts?.repeat !== undefined) return this.addRepeatable(name, data, opts);
    if (!this.telemetry) return this.enqueue(name, data, opts);
    return trace(
      this.telemetry,
      SpanKind.PRODUCER,
      this.name,
      'add',
      `${this.name}.${name}`,
      async (span, metadata) => {
        span?.setAttributes({ [TelemetryAttributes.JobName]: name, [TelemetryAttributes.JobOptions]: JSON.stringify(opts ?? {}) });
        const job = await this.enqueue(name, data, withContext(opts, metadata));
        span?.setAttributes({ [TelemetryAttributes.JobId]: job.id });
        return job;
      },
      { propagate: true },
    );
  }

  private enqueue(name: NameType, data: DataType, opts?: JobsOptions): Promise<Job<DataType, ResultType, NameType>> {
    let entry: PendingAdd<DataType, ResultType, NameType>;
    try {
      entry = this.prepare({ name, data, opts });
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    // Adds made in the same turn of the event loop go to Redis in one call (each add is still
    // atomic: the call is all-or-nothing). With many adds in flight this saves a round trip and
    // a script run per job.
    const promise = new Promise<Job<DataType, ResultType, NameType>>((resolve, reject) => {
      entry.resolve = resolve;
      entry.reject = reject;
    });
    this.pendingAdds.push(entry);
    if (this.pendingAdds.length === 1) queueMicrotask(() => this.flushAdds());
    return promise;
  }

  private prepare(job: BulkJob<DataType, NameType>): PendingAdd<DataType, ResultType, NameType> {
    validateJobName(job.name);
    validateJobOptions(job.opts, this.backoffTypes);
    const merged = job.opts ? { ...this.defaultJobOptions, ...job.opts } : this.defaultJobOptions;
    if (merged.deadLetter) this.checkDeadLetterQueue(merged.deadLetter.queue);
    let tenant = '';
    const budget = this.opts.budget;
    if (budget && merged.cost !== undefined) {
      if (merged.parent) {
        throw new InvalidOptionsError(
          'A job with a parent cannot be charged to a budget (flows are not budgeted): add it without cost, or without parent.',
        );
      }
      tenant = tenantOf(budget as BudgetOptions<unknown>, job.data);
    }
    return { name: job.name, data: job.data, merged, prepared: toNewJob(job.name, job.data, merged), tenant };
  }

  private flushAdds(): void {
    const taken = this.pendingAdds.splice(0, MAX_ADDS_PER_CALL);
    if (this.pendingAdds.length > 0) queueMicrotask(() => this.flushAdds());
    // Children (adds with a parent) go in a call of their own: they are written by the flow script.
    const children = taken.filter((entry) => entry.merged.parent);
    const others = children.length === 0 ? taken : taken.filter((entry) => !entry.merged.parent);
    for (const batch of [others, children]) {
      if (batch.length === 0) continue;
      // Separate adds coalesced into one call: a job refused by its budget refuses only itself.
      this.send(batch, false).then(
        (jobs) => settleAdds(batch, jobs),
        (err: unknown) => {
          // A group's maxSize refuses the whole call (nothing was written): one add earned it, so
          // the adds are sent again one by one, in order, and only that one fails.
          if (batch.length > 1 && err instanceof GroupMaxSizeExceededError) void this.sendOneByOne(batch);
          else batch.forEach((entry) => entry.reject?.(err));
        },
      );
    }
  }

  /** Sends coalesced adds one call each, in order: each settles with its own outcome. */
  private async sendOneByOne(batch: PendingAdd<DataType, ResultType, NameType>[]): Promise<void> {
    for (const entry of batch) {
      try {
        settleAdds([entry], await this.send([entry], false));
      } catch (err) {
        entry.reject?.(err);
      }
    }
  }

  /**
   * Adds several jobs atomically: all are written or none. Keep batches to about 1,000 jobs
   * so one call does not hold Redis for long. With a `budget`, all or nothing too: one job over
   * its tenant's budget refuses the whole call (BudgetExceededError names it).
   */
  async addBulk(jobs: BulkJob<DataType, NameType>[]): Promise<Job<DataType, ResultType, NameType>[]> {
    if (!this.telemetry) return this.addAll(jobs);
    return trace(
      this.telemetry,
      SpanKind.PRODUCER,
      this.name,
      'addBulk',
      this.name,
      async (span, metadata) => {
        if (Array.isArray(jobs)) {
          span?.setAttributes({
            [TelemetryAttributes.BulkNames]: jobs.map((job) => job?.name),
            [TelemetryAttributes.BulkCount]: jobs.length,
          });
        }
        const added = await this.addAll(
          Array.isArray(jobs) ? jobs.map((job) => ({ ...job, opts: withContext(job?.opts, metadata) })) : jobs,
        );
        span?.setAttributes({ [TelemetryAttributes.JobIds]: added.map((job) => job.id as string) });
        return added;
      },
      { propagate: true },
    );
  }

  private async addAll(jobs: BulkJob<DataType, NameType>[]): Promise<Job<DataType, ResultType, NameType>[]> {
    if (!Array.isArray(jobs)) throw new InvalidOptionsError('addBulk takes an array of { name, data, opts }.');
    const entries = jobs.map((job, i) => {
      checkArgument(BULK_JOB, job, `addBulk(jobs)[${i}]`);
      return this.prepare(job);
    });
    if (entries.length === 0) return [];
    // All-or-nothing: a refusal throws, so every element is a Job.
    return (await this.send(entries, true)) as Job<DataType, ResultType, NameType>[];
  }

  /**
   * Writes prepared jobs in one atomic call and builds their Job objects; with `allOrNothing`
   * false, a job refused by its budget (or a weighted limit) gets its error in its place.
   */
  private async send(
    entries: PendingAdd<DataType, ResultType, NameType>[],
    allOrNothing: boolean,
  ): Promise<(Job<DataType, ResultType, NameType> | Error)[]> {
    await this.ready();
    if (entries.some((entry) => entry.merged.parent)) return this.sendChildren(entries);
    this.inFlight++;
    let result;
    try {
      result = await this.backend.addJobs(
        entries.map((entry) => entry.prepared),
        { producerId: this.producerId, seq: ++this.seq, keep: Math.max(64, 2 * this.inFlight + 16) },
        this.clock.backendNow(),
        this.charge(entries, allOrNothing),
      );
    } finally {
      this.inFlight--;
    }
    this.checkEpoch(result.epoch);
    const out = new Array<Job<DataType, ResultType, NameType> | Error>(entries.length);
    // The existing jobs of duplicates are read together (one round trip for a large re-sent bulk).
    const existingJobs = await Promise.all(
      result.outcomes.map((outcome, i) =>
        outcome === 'added' || outcome === 'refused' ? Promise.resolve(undefined) : this.getJob(result.ids[i]),
      ),
    );
    for (let i = 0; i < entries.length; i++) {
      const id = result.ids[i];
      const outcome = result.outcomes[i];
      const { name, data, merged } = entries[i];
      const refused = result.refused?.[i];
      if (refused) {
        out[i] = refused;
        continue;
      }
      if (outcome !== 'added') {
        const existing = existingJobs[i];
        if (existing) {
          this.emit(outcome, existing);
          out[i] = existing;
          continue;
        }
      }
      const job = new Job<DataType, ResultType, NameType>(this, name, data, merged, id);
      job.timestamp = merged.timestamp ?? result.now;
      out[i] = job;
      this.emit('waiting', job);
    }
    return out;
  }

  /** What an add call charges: the budget and each job's tenant (only when a job has a cost). */
  private charge(entries: PendingAdd<DataType, ResultType, NameType>[], allOrNothing: boolean): AddCharge {
    const budget = this.opts.budget;
    if (!budget || !entries.some((entry) => entry.tenant !== '')) return { allOrNothing };
    return { allOrNothing, budget: { limit: budget.limit, window: budget.window, tenants: entries.map((entry) => entry.tenant) } };
  }

  /** Writes prepared jobs some of which join an existing parent (one atomic flow call). */
  private async sendChildren(entries: PendingAdd<DataType, ResultType, NameType>[]): Promise<Job<DataType, ResultType, NameType>[]> {
    if (entries.some((entry) => entry.merged.deduplication)) {
      throw new InvalidOptionsError(
        'One addBulk cannot mix jobs with a parent and jobs with deduplication (they are written by different scripts): add them in separate calls.',
      );
    }
    const nodes = entries.map((entry) => toFlowNode(this.prefix, this.name, entry.name, entry.data, entry.merged, 0, true));
    checkFlowSlots(
      this.backend,
      nodes.flatMap((node) => (node.parent ? [node.parent.queue] : [])),
    );
    const result = await this.backend.addFlow(nodes, { producerId: this.producerId, seq: ++this.seq, keep: 64 }, this.clock.backendNow());
    explainRefusal(result, nodes, this.prefix);
    if (!result.ok) return [];
    return Promise.all(
      entries.map(async ({ name, data, merged }, i) => {
        const id = result.ids[i];
        if (result.outcomes[i] === 'duplicated') {
          const existing = await this.getJob(id);
          if (existing) {
            this.emit('duplicated', existing);
            return existing;
          }
        }
        const job = new Job<DataType, ResultType, NameType>(this, name, data, merged, id);
        job.timestamp = merged.timestamp ?? result.now;
        if (nodes[i].parent) job.setParent(nodes[i].parent);
        this.emit('waiting', job);
        return job;
      }),
    );
  }

  private checkDeadLetterQueue(queue: string): void {
    checkDeadLetterRoute(this.backend, queue);
  }

  /**
   * Replays the dead letters of this dead-letter queue that match (all of them by default): each
   * job goes back into its origin queue under its original id, with fresh attempts, and the dead
   * letter is removed, atomically. One whose origin job exists and is not failed is refused (kept).
   * Works in batches of 1,000; `onProgress` reports after each.
   *
   * @example await dlq.replayDeadLetters({ failedReasonContains: 'ECONNREFUSED', since: Date.now() - 3600_000 });
   */
  async replayDeadLetters(opts: ReplayDeadLettersOptions = {}): Promise<ReplayResult> {
    await this.ready();
    return replayDeadLetters(this, opts);
  }

  /**
   * Reads a job's output stream (what its processor wrote with `job.stream.write`): replays what
   * is stored, then follows live writes, in order, with no gap or duplicate at the switch; ends
   * at the end of the latest attempt's output (`job.stream.end()`), when the job finishes and
   * everything was read, or when `signal` aborts. Resume after a reconnect with `from: lastId`.
   * Readers of one Queue share its blocking connections. See docs/streams.md.
   *
   * @example
   * for await (const chunk of queue.readStream(job.id)) process.stdout.write(String(chunk.data));
   */
  readStream(jobId: string, opts?: ReadStreamOptions): AsyncGenerator<StreamChunk> {
    if (typeof jobId !== 'string' || jobId === '')
      throw new InvalidDataError(`readStream: jobId must be a non-empty string, got ${showValue(jobId)}.`);
    const hub = (): OutputHub => (this.outputHub ??= new OutputHub(this.backend));
    return readOutput(this.backend, hub, () => this.ready(), jobId, opts);
  }

  /** Closes the queue's connection (a connection you passed in stays open); open readStream iterations end. */
  override async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.outputHub?.close();
    // Within CLOSE_GRACE_MS, whatever the server does.
    await this.closeBackend();
    this.emit('closed');
  }
}

/**
 * A job's options with the producer's serialised context (`telemetry.metadata`), unless the job
 * opts out (`omitContext`) or brings its own.
 */
function withContext(opts: JobsOptions | undefined, metadata: string | undefined): JobsOptions | undefined {
  if (metadata === undefined || opts?.telemetry?.omitContext || opts?.telemetry?.metadata !== undefined) return opts;
  return { ...opts, telemetry: { ...opts?.telemetry, metadata } };
}

/** Settles coalesced adds with the call's results: each its Job, or its own refusal. */
function settleAdds<D, R, N extends string>(batch: PendingAdd<D, R, N>[], jobs: (Job<D, R, N> | Error)[]): void {
  batch.forEach((entry, i) => {
    const job = jobs[i];
    if (job instanceof Error) entry.reject?.(job);
    else entry.resolve?.(job);
  });
}
