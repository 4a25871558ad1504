/**
 * Runs a processor file in the sandbox pool: builds the child's job from a claimed Job and gives
 * the child's job methods their fenced implementations in this process.
 */
import type { Job } from '../job/job.js';
import type { RunProcessor } from './executor.js';
import { SandboxPool, type SandboxHooks, type SandboxJob, type SandboxOptions } from './sandbox/index.js';

function toSandboxJob(job: Job): SandboxJob {
  return {
    id: job.id as string,
    name: job.name,
    data: job.data,
    opts: job.opts,
    attemptsMade: job.attemptsMade,
    attemptsStarted: job.attemptsStarted,
    timestamp: job.timestamp,
    processedOn: job.processedOn,
    delay: job.delay,
    priority: job.priority,
    queueName: job.queueName,
    token: job.token as string,
    progress: job.progress,
  };
}

function hooksFor(job: Job): SandboxHooks {
  return {
    updateProgress: (progress) => job.updateProgress(progress as number | object),
    log: (line) => job.log(line),
    updateData: (data) => job.updateData(data),
    step: (key, run) => job.step(key, run),
    streamWrite: (chunk) => job.stream.write(chunk),
    streamEnd: () => job.stream.end(),
  };
}

/** A processor file run in child processes (or worker threads), and the pool behind it. */
export class SandboxedProcessor {
  readonly pool: SandboxPool;

  constructor(file: string | URL, options: SandboxOptions) {
    this.pool = new SandboxPool(file, options);
  }

  /** The processor as the executor calls it. */
  readonly run: RunProcessor = (job, _token, signal) => this.pool.run(toSandboxJob(job), hooksFor(job), signal);

  /** Ends the child running attempt `token` of `jobId` (a timed-out attempt that ignored its signal). */
  terminate(jobId: string, token: string): Promise<void> {
    return this.pool.terminate(jobId, token);
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
