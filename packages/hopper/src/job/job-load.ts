/**
 * Loading a Job: from a claim's reply (the job a processor receives) or from its stored record
 * (`getJob` and the getters). The logic behind `Job.fromClaimed` and `Job.fromRecord`.
 */
import type { ClaimedJob, JobRecord } from '../backend/backend.js';
import type { Job } from './job.js';
import { optsWithId, parseJson, parseOpts, type JobContext, type JobProgress } from './job-json.js';
import { parentFromOpts } from './job-key.js';

/** `Job.fromClaimed`: the claimed job, with its attempt's fence. `JobClass` is Job (passed in: no import cycle). */
export function loadClaimed<D, R, N extends string>(
  JobClass: typeof Job,
  ctx: JobContext,
  claimed: ClaimedJob,
  processedOn: number,
  processedBy?: string,
): Job<D, R, N> {
  const job = new JobClass<D, R, N>(
    ctx,
    claimed.name as N,
    JSON.parse(claimed.data) as D,
    optsWithId(parseOpts(claimed.opts), claimed.id),
    claimed.id,
  );
  job.timestamp = claimed.timestamp;
  job.attemptsMade = claimed.attemptsMade;
  job.attemptsStarted = claimed.attemptsStarted;
  job.priority = claimed.priority;
  job.delay = claimed.delay;
  job.stalledCounter = claimed.stalledCounter;
  if (claimed.failedReason !== undefined) job.failedReason = claimed.failedReason;
  if (claimed.progress !== '') job.progress = JSON.parse(claimed.progress) as JobProgress;
  job.processedOn = processedOn;
  if (processedBy !== undefined) job.processedBy = processedBy;
  job.token = claimed.token;
  job.fence = { token: claimed.token, attempt: claimed.attemptsStarted };
  const parent = job.opts.parent && parentFromOpts(ctx.prefix, job.opts.parent);
  if (parent) job.setParent(parent);
  return job;
}

/** `Job.fromRecord`: the job as stored. `JobClass` is Job (passed in: no import cycle). */
export function loadRecord<D, R, N extends string>(JobClass: typeof Job, ctx: JobContext, record: JobRecord): Job<D, R, N> {
  const job = new JobClass<D, R, N>(
    ctx,
    record.name as N,
    JSON.parse(record.data) as D,
    optsWithId(parseOpts(record.opts), record.id),
    record.id,
  );
  job.timestamp = record.timestamp;
  job.attemptsMade = record.attemptsMade;
  job.attemptsStarted = record.attemptsStarted;
  job.stalledCounter = record.stalledCounter;
  job.priority = record.priority;
  job.delay = record.delay;
  job.progress = (parseJson(record.progress) as JobProgress | undefined) ?? 0;
  job.processedOn = record.processedOn;
  job.finishedOn = record.finishedOn;
  if (record.processedBy !== undefined) job.processedBy = record.processedBy;
  job.returnvalue = (parseJson(record.returnvalue) ?? null) as R;
  job.failedReason = record.failedReason as string;
  job.stacktrace = (parseJson(record.stacktrace) as string[] | undefined) ?? [];
  if (record.deduplicationId !== undefined) job.deduplicationId = record.deduplicationId;
  if (record.origin) job.deadLetterOrigin = { ...record.origin, failedOn: record.timestamp };
  if (record.parent) job.setParent(record.parent);
  return job;
}
