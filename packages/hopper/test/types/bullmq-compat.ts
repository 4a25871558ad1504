/**
 * Type-level test (checked by `tsc` in `npm test` and `npm run lint`): code typed against
 * BullMQ's pinned types for the surface Hopper implements compiles against Hopper's types.
 * Each assignment fails to compile if Hopper's type stops accepting BullMQ's.
 */
import type * as B from 'bullmq';
import type * as H from '../../src/index.js';

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
