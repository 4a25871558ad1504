/**
 * Writes to a job's progress, data and log, fenced to the attempt when made from a processor
 * (a stale attempt's write is rejected with a LockLostError). The logic behind those Job methods.
 */
import { InvalidDataError } from './errors.js';
import type { Job } from './job.js';
import type { JobProgress } from './job-json.js';
import { serialize } from './options.js';
import { throwOnWriteCode } from './write-codes.js';

/** `job.updateProgress(progress)`. */
export async function writeProgress(job: Job, progress: JobProgress): Promise<void> {
  const id = job.requireId();
  const json = serialize(progress, 'Progress');
  await job.ctx.ready();
  throwOnWriteCode(job, await job.ctx.backend.updateProgress(id, json, job.fence), 'update progress of', 'updateProgress');
  job.progress = progress;
  job.ctx.jobProgressed?.(job, progress);
}

/** `job.updateData(data)`. */
export async function writeData(job: Job, data: unknown): Promise<void> {
  const id = job.requireId();
  const json = serialize(data === undefined ? {} : data, 'Job data', job.opts.sizeLimit);
  await job.ctx.ready();
  throwOnWriteCode(job, await job.ctx.backend.updateData(id, json, job.fence), 'update data of', 'updateData');
  job.data = data;
}

/** `job.log(logRow)`: returns the number of lines. */
export async function appendLog(job: Job, logRow: string): Promise<number> {
  const id = job.requireId();
  if (typeof logRow !== 'string') throw new InvalidDataError('job.log() takes a string.');
  await job.ctx.ready();
  const result = await job.ctx.backend.addLog(id, logRow, job.fence, job.opts.keepLogs ?? 0);
  throwOnWriteCode(job, result.code, 'log to', 'addLog');
  return result.count;
}

/** `job.clearLogs(keepLogs)`. */
export async function clearJobLogs(job: Job, keepLogs: number | undefined): Promise<void> {
  const id = job.requireId();
  if (keepLogs !== undefined && !(Number.isInteger(keepLogs) && keepLogs >= 0))
    throw new InvalidDataError(`job.clearLogs(keepLogs): keepLogs must be an integer >= 0 (lines to keep), got ${keepLogs}.`);
  await job.ctx.ready();
  await job.ctx.backend.clearLogs(id, keepLogs ?? 0);
}
