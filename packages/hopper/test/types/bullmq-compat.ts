/**
 * Type-level test (checked by `tsc` in `npm test` and `npm run lint`): code typed against
 * BullMQ's pinned types for the surface Hopper implements compiles against Hopper's types.
 * Each assignment fails to compile if Hopper's type stops accepting BullMQ's.
 */
import type * as B from 'bullmq';
import * as H from '../../src/index.js';

declare const bullJobsOptions: B.JobsOptions;
declare const bullDefaultJobOptions: B.DefaultJobOptions;
declare const bullBackoff: B.BackoffOptions;
declare const bullKeepJobs: B.KeepJobs;
// BullMQ's options are generic over the connection; Hopper connects through ioredis only.
declare const bullQueueOptions: B.QueueOptions<H.ConnectionOptions>;
declare const bullWorkerOptions: B.WorkerOptions<H.ConnectionOptions>;
declare const bullQueueEventsOptions: B.QueueEventsOptions<H.ConnectionOptions>;
declare const bullJobState: B.JobState;

// Options: BullMQ's option objects are valid Hopper options.
export const jobsOptions: H.JobsOptions = bullJobsOptions;
export const defaultJobOptions: H.JobsOptions = bullDefaultJobOptions;
export const backoff: H.BackoffOptions = bullBackoff;
export const keepJobs: H.KeepJobs = bullKeepJobs;
export const queueOptions: H.QueueOptions = bullQueueOptions;
export const workerOptions: H.WorkerOptions = bullWorkerOptions;
export const queueEventsOptions: H.QueueEventsOptions = bullQueueEventsOptions;
export const jobState: H.JobState = bullJobState;
declare const bullFinished: B.FinishedStatus;
export const finished: H.FinishedStatus = bullFinished;
export const defaults: H.DefaultJobOptions = bullDefaultJobOptions;

// QueueBase, as libraries built on BullMQ extend it (bullmq-extra's Router): the constructor BullMQ
// code calls, `client` and `waitUntilReady()` as the Redis client, `close()`, `delay`.
export class StreamWriter extends H.QueueBase {
  constructor(name: string, opts?: H.QueueBaseOptions & { maxLen?: number }) {
    super(name, { blockingConnection: false, ...opts });
  }
  async write(entry: string): Promise<string | null> {
    const client: H.RedisClient = await this.client;
    return client.xadd(this.name, '*', 'entry', entry);
  }
  async port(): Promise<unknown> {
    return (await this.waitUntilReady()).options;
  }
}
export const redisOptions: H.RedisOptions = { port: 6379, maxRetriesPerRequest: null };
export const waited: Promise<void> = H.delay(1, new AbortController());
export const removed: Promise<number> = ({} as H.Queue).removeGlobalRateLimit();

// The Job surface BullMQ code reads and calls in a processor: Hopper's Job provides it.
type JobSurface = Pick<
  B.Job,
  | 'id'
  | 'name'
  | 'data'
  | 'progress'
  | 'returnvalue'
  | 'failedReason'
  | 'stacktrace'
  | 'attemptsMade'
  | 'attemptsStarted'
  | 'timestamp'
  | 'processedOn'
  | 'finishedOn'
  | 'delay'
  | 'priority'
  | 'queueName'
  | 'token'
  | 'updateProgress'
  | 'log'
  | 'getState'
>;
declare const hopperJob: H.Job<{ to: string }, number>;
export const jobSurface: JobSurface = hopperJob;

// A processor written against that surface is a Hopper processor.
type SurfaceProcessor<D, R> = (job: Pick<B.Job<D, R>, keyof JobSurface>, token?: string, signal?: AbortSignal) => Promise<R>;
declare const bullStyleProcessor: SurfaceProcessor<{ to: string }, number>;
export const processor: H.Processor<{ to: string }, number> = bullStyleProcessor;

// Worker and QueueEvents listeners written for BullMQ's event signatures are accepted.
declare const worker: H.Worker<{ to: string }, number>;
worker.on('completed', (job: JobSurface, result: number, prev: string) => void [job, result, prev]);
worker.on('failed', (job: JobSurface | undefined, error: Error, prev: string) => void [job, error, prev]);
worker.on('active', (job: JobSurface, prev: string) => void [job, prev]);
worker.on('progress', (job: JobSurface, progress: B.JobProgress) => void [job, progress]);
worker.on('stalled', (jobId: string, prev: string) => void [jobId, prev]);
worker.on('drained', () => undefined);
worker.on('error', (failedReason: Error) => void failedReason);
worker.on('closing', (msg: string) => void msg);
worker.on('closed', () => undefined);
worker.on('ready', () => undefined);
worker.on('paused', () => undefined);
worker.on('resumed', () => undefined);

declare const queueEvents: H.QueueEvents;
queueEvents.on('completed', (args: { jobId: string; returnvalue: string }, id: string) => void [args, id]);
queueEvents.on('failed', (args: { jobId: string; failedReason: string; prev?: string }, id: string) => void [args, id]);
queueEvents.on('added', (args: { jobId: string; name: string }, id: string) => void [args, id]);
queueEvents.on('waiting', (args: { jobId: string; prev?: string }, id: string) => void [args, id]);
queueEvents.on('active', (args: { jobId: string; prev?: string }, id: string) => void [args, id]);
queueEvents.on('delayed', (args: { jobId: string; delay: number }, id: string) => void [args, id]);
queueEvents.on('progress', (args: { jobId: string; data: B.JobProgress }, id: string) => void [args, id]);
queueEvents.on('stalled', (args: { jobId: string }, id: string) => void [args, id]);
queueEvents.on('duplicated', (args: { jobId: string }, id: string) => void [args, id]);
queueEvents.on('retries-exhausted', (args: { jobId: string; attemptsMade: string }, id: string) => void [args, id]);
queueEvents.on('drained', (id: string) => void id);
queueEvents.on('paused', (args: object, id: string) => void [args, id]);
queueEvents.on('resumed', (args: object, id: string) => void [args, id]);

// Errors: the names BullMQ code catches exist.
export const unrecoverable: typeof B.UnrecoverableError extends new (message?: string) => Error ? typeof H.UnrecoverableError : never =
  {} as typeof H.UnrecoverableError;

// Issue 3's surface: job types, deduplication, and calls as BullMQ code writes them.
declare const bullJobType: B.JobType;
declare const bullDedup: B.DeduplicationOptions;
export const jobType: H.JobType = bullJobType;
export const dedup: H.DeduplicationOptions = bullDedup;

/** Never called: it only has to compile, with BullMQ-style arguments and results. */
export async function bullmqStyleCalls(queue: H.Queue<{ to: string }, number>, worker: H.Worker<{ to: string }, number>): Promise<void> {
  const jobs: H.Job<{ to: string }, number>[] = await queue.getJobs(['completed', 'failed'], 0, 10, true);
  await queue.getJobs('waiting');
  const counts: Record<string, number> = await queue.getJobCounts('wait', 'active', 'paused', 'repeat');
  const total: number = await queue.getJobCountByTypes('waiting', 'delayed');
  const pending: number = await queue.count();
  const lists: H.Job[][] = await Promise.all([
    queue.getWaiting(0, -1),
    queue.getActive(0, -1),
    queue.getDelayed(0, -1),
    queue.getPrioritized(0, -1),
    queue.getCompleted(0, -1),
    queue.getFailed(0, -1),
    queue.getWaitingChildren(0, -1),
  ]);
  const sizes: number[] = await Promise.all([
    queue.getWaitingCount(),
    queue.getActiveCount(),
    queue.getDelayedCount(),
    queue.getPrioritizedCount(),
    queue.getCompletedCount(),
    queue.getFailedCount(),
    queue.getWaitingChildrenCount(),
    queue.getWorkersCount(),
  ]);
  const { logs, count }: { logs: string[]; count: number } = await queue.getJobLogs('1', 0, -1, true);
  const dedupId: string | undefined = await queue.getDeduplicationJobId('d');
  await queue.removeDeduplicationKey('d');
  const workers: { id: string }[] = await queue.getWorkers();
  const version: string | undefined = await queue.getVersion();
  await queue.drain(true);
  const cleaned: string[] = await queue.clean(1000, 100, 'completed');
  await queue.clean(0, 0, 'wait');
  await queue.obliterate({ force: true, count: 500 });
  await queue.remove('1');
  const removedCode: number = await queue.remove('1', { removeChildren: false });
  await queue.retryJobs({ state: 'failed', count: 100, timestamp: Date.now() });
  await queue.promoteJobs({ count: 100 });
  const trimmed: number = await queue.trimEvents(1000);
  await queue.add('x', { to: 'a' }, { deduplication: { id: 'd', ttl: 1000, extend: true, replace: true } });

  const job = jobs[0];
  await job.updateData({ to: 'b' });
  await job.retry('failed');
  await job.remove();
  await job.remove({ removeChildren: true });
  await job.promote();
  await job.changeDelay(1000);
  await job.changePriority({ priority: 2, lifo: false });
  job.discard();
  const states: boolean[] = await Promise.all([
    job.isCompleted(),
    job.isFailed(),
    job.isActive(),
    job.isWaiting(),
    job.isDelayed(),
    job.isWaitingChildren(),
  ]);
  const created: H.Job<{ to: string }, number> = await H.Job.create(queue, 'y', { to: 'c' });
  const fetched = await H.Job.fromId(queue, '1');

  const token = 'token';
  const next = await worker.getNextJob(token, { block: true });
  if (next) {
    await next.extendLock(token, 30_000);
    await next.moveToDelayed(Date.now() + 1000, token);
    await next.moveToCompleted(1, token, false);
    await next.moveToFailed(new Error('x'), token, false);
    const waiting: boolean = await next.moveToWaitingChildren(token);
    const backInLine: number = await next.moveToWait(token);
    const by: string | undefined = next.processedBy;
    void [waiting, backInLine, by];
  }
  // Issue 13: BullMQ's queue-side rate limit and concurrency reads.
  await queue.rateLimit(1000);
  const ttl: number = await queue.getRateLimitTtl(1);
  const maxed: boolean = await queue.isMaxed();
  const readers: Record<string, string>[] = await queue.getQueueEvents();
  void [ttl, maxed, readers, new H.WaitingError()];
  await worker.rateLimit(1000);
  const limitError: Error = H.Worker.RateLimitError();
  const errors: Error[] = [new H.DelayedError(), new H.WaitingChildrenError(), new H.RateLimitError(), new H.UnrecoverableError('x')];
  void [
    lists,
    jobs,
    counts,
    total,
    pending,
    sizes,
    logs,
    count,
    dedupId,
    workers,
    version,
    cleaned,
    trimmed,
    removedCode,
    states,
    created,
    fetched,
    limitError,
    errors,
  ];
}

// Issue 6's surface: flows as BullMQ code writes them.
declare const bullFlowJob: B.FlowJob;
declare const bullFlowOpts: B.FlowOpts;
declare const bullNodeOpts: B.NodeOpts;
declare const bullFlowProducerOptions: B.QueueBaseOptions<H.ConnectionOptions>;
export const flowJob: H.FlowJob = bullFlowJob;
export const flowOpts: H.FlowOpts = bullFlowOpts;
export const nodeOpts: H.NodeOpts = bullNodeOpts;
export const flowProducerOptions: H.FlowProducerOptions = bullFlowProducerOptions;

/** Never called: flow calls and their results, BullMQ-style. */
export async function bullmqStyleFlows(flows: H.FlowProducer, queue: H.Queue): Promise<void> {
  const tree: { job: JobSurface; children?: unknown[] } = await flows.add(bullFlowJob, bullFlowOpts);
  const trees: { job: JobSurface }[] = await flows.addBulk([bullFlowJob]);
  const read = await flows.getFlow(bullNodeOpts);
  await queue.add('child', {}, { parent: { id: '1', queue: 'bull:parent' }, failParentOnFailure: true });
  const job = (await queue.getJob('1'))!;
  const values: Record<string, number> = await job.getChildrenValues<number>();
  const failed: Record<string, string> = await job.getFailedChildrenValues();
  const deps = await job.getDependencies({ processed: { cursor: 0, count: 10 }, unprocessed: { cursor: 0, count: 10 } });
  const processed: Record<string, unknown> | undefined = deps.processed;
  const next: number | undefined = deps.nextProcessedCursor;
  const counts = await job.getDependenciesCount({ processed: true, unprocessed: true });
  const parentKey: string | undefined = job.parentKey;
  const parent: { id: string; queueKey: string } | undefined = job.parent;
  await flows.close();
  void [tree, trees, read, values, failed, processed, next, counts, parentKey, parent];
}
