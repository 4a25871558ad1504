/**
 * Replaying dead letters (`queue.replayDeadLetters`): selecting them page by page and putting
 * their jobs back into their origin queues in batches. See docs/failures.md.
 */
import { unexpectedKind, type QueueBackend } from '../backend/backend.js';
import type { Clock } from '../clock/clock.js';
import type { Job } from '../job/job.js';
import type { JobState } from '../job/states.js';

/** What `replayDeadLetters` selects (all given criteria must match) and how it reports. */
export interface ReplayDeadLettersOptions {
  /** Only these dead letters (ids in this dead-letter queue). */
  ids?: string[];
  /** Only dead letters of jobs with this name. */
  name?: string;
  /** Only those whose failed reason contains this text. */
  failedReasonContains?: string;
  /** Only those that failed at or after this time. */
  since?: Date | number;
  /** At most this many. */
  limit?: number;
  /** Called after each batch of 1,000 with the totals so far. */
  onProgress?: (progress: ReplayResult) => void;
}

/** What `replayDeadLetters` did. */
export interface ReplayResult {
  /** Dead letters whose job went back to its origin queue. */
  replayed: number;
  /** Dead letters kept because their origin job exists and is not failed, or they are being handled. */
  refused: string[];
}

/** Dead letters replayed per call. */
const BATCH = 1000;

/** What replaying needs of the dead-letter queue. */
interface DeadLetterQueue {
  readonly backend: QueueBackend;
  readonly clock: Clock;
  getJobs(types: JobState[], start: number, end: number, asc: boolean): Promise<Job[]>;
}

/** `queue.replayDeadLetters(opts)`: see the Queue method. */
export async function replayDeadLetters(queue: DeadLetterQueue, opts: ReplayDeadLettersOptions): Promise<ReplayResult> {
  const result: ReplayResult = { replayed: 0, refused: [] };
  const limit = opts.limit ?? Number.POSITIVE_INFINITY;
  const since = opts.since === undefined ? undefined : typeof opts.since === 'number' ? opts.since : opts.since.getTime();
  const matches = (job: Job): boolean =>
    job.deadLetterOrigin !== undefined &&
    (opts.name === undefined || job.name === opts.name) &&
    (opts.failedReasonContains === undefined || (job.failedReason ?? '').includes(opts.failedReasonContains)) &&
    (since === undefined || (job.deadLetterOrigin.failedOn ?? job.timestamp) >= since);
  const replay = async (ids: string[]): Promise<void> => {
    const outcomes = await queue.backend.replayDeadLetters(ids, queue.clock.backendNow());
    outcomes.forEach(({ kind }, i) => {
      switch (kind) {
        case 'replayed':
          result.replayed++;
          break;
        case 'originExists':
        case 'busy':
          result.refused.push(ids[i]);
          break;
        case 'missing':
        case 'notDeadLetter':
          break;
        default:
          unexpectedKind(kind);
      }
    });
    opts.onProgress?.({ ...result, refused: [...result.refused] });
  };
  if (opts.ids) {
    for (let i = 0; i < opts.ids.length && result.replayed < limit; i += BATCH) {
      await replay(opts.ids.slice(i, Math.min(i + BATCH, i + limit - result.replayed)));
    }
    return result;
  }
  for (const state of ['waiting', 'completed', 'failed'] as const) {
    let start = 0;
    while (result.replayed < limit) {
      const jobs = await queue.getJobs([state], start, start + BATCH - 1, true);
      if (jobs.length === 0) break;
      const chosen = jobs
        .filter(matches)
        .slice(0, limit - result.replayed)
        .map((job) => job.id as string);
      const before = result.replayed;
      if (chosen.length > 0) await replay(chosen);
      // Replayed dead letters leave the list: the next page starts after the ones kept.
      start += jobs.length - (result.replayed - before);
      if (jobs.length < BATCH) break;
    }
  }
  return result;
}
