/**
 * What the dashboard computes over the Queue API, each with bounded work per request: searches
 * and dead-letter listings that scan one slice of a state per call (the client follows the
 * cursor and shows progress), per-minute completed/failed series, wait/run percentiles from a
 * sample of recent jobs, and the options a duplicated job keeps.
 */
import type { Job, JobState, JobsOptions, Queue } from 'hopper-queue';
import type { Budget } from './bounded.js';

/** Jobs read per scan call at most (a call's work is bounded whatever the queue's size). */
export const MAX_SCAN = 5_000;
/** Matches returned per scan call at most. */
export const MAX_MATCHES = 200;

/** One slice of a scan: the matches, where to go on (`null` when the state is exhausted), and progress. */
export interface ScanPage<T> {
  matches: T[];
  /** The offset to pass as `cursor` for the next slice, or null when done. */
  cursor: number | null;
  /** Jobs examined so far (cursor + this slice). */
  scanned: number;
  /** Jobs in the state when this slice was read. */
  total: number;
}

/**
 * Scans jobs of `state` from offset `cursor`, at most `scan` of them, keeping what `pick` returns
 * for those it accepts (undefined: not a match; at most `maxMatches`, default {@link MAX_MATCHES}; the cursor then stops
 * right after the last match kept).
 */
export async function scanJobs<T>(
  queue: Queue,
  state: JobState,
  cursor: number,
  scan: number,
  asc: boolean,
  pick: (job: Job) => T | undefined,
  maxMatches = MAX_MATCHES,
): Promise<ScanPage<T>> {
  const total = (await queue.getJobCounts(state))[state] ?? 0;
  const matches: T[] = [];
  let at = cursor;
  const end = Math.min(total, cursor + scan);
  const BATCH = 500;
  while (at < end && matches.length < maxMatches) {
    const jobs = await queue.getJobs(state, at, Math.min(end, at + BATCH) - 1, asc);
    if (jobs.length === 0) {
      at = end;
      break;
    }
    let taken = 0;
    for (const job of jobs) {
      taken++;
      const picked = pick(job);
      if (picked !== undefined) {
        matches.push(picked);
        if (matches.length >= maxMatches) break;
      }
    }
    at += taken;
  }
  return { matches, cursor: at < total && at < Number.MAX_SAFE_INTEGER ? at : null, scanned: Math.min(at, total), total };
}

/** What a search looks in. */
export type SearchField = 'any' | 'id' | 'name' | 'data' | 'reason';
export const SEARCH_FIELDS: readonly SearchField[] = ['any', 'id', 'name', 'data', 'reason'];

/** What a search matches against: the job as the viewer sees it (redacted), never its stored values. */
export interface SearchableView {
  id?: unknown;
  name?: unknown;
  data?: unknown;
  failedReason?: unknown;
}

/**
 * A matcher for `text` in `field` (case-insensitive substring) over the redacted view of a job:
 * a search finds only what the viewer may see, so it cannot be used to guess a redacted value.
 */
export function matcher(field: SearchField, text: string): (view: SearchableView) => boolean {
  const needle = text.toLowerCase();
  const has = (value: unknown): boolean => {
    if (value === undefined || value === null) return false;
    const s = typeof value === 'string' ? value : JSON.stringify(value);
    return s !== undefined && s.toLowerCase().includes(needle);
  };
  return (view) =>
    ((field === 'any' || field === 'id') && has(view.id)) ||
    ((field === 'any' || field === 'name') && has(view.name)) ||
    ((field === 'any' || field === 'data') && has(view.data)) ||
    ((field === 'any' || field === 'reason') && has(view.failedReason));
}

/** Per-minute counts, newest minute first. */
export interface Series {
  /** Where the counts come from: the workers' `metrics` option, or the finished jobs still kept. */
  source: 'metrics' | 'sample';
  /** The minute (ms, start) of index 0. */
  newestMinute: number;
  completed: number[];
  failed: number[];
}

const MINUTE = 60_000;

/**
 * The last `minutes` per-minute counts of completed and failed jobs. When workers record
 * metrics (`metrics` worker option, BullMQ's getMetrics) those are used; otherwise the counts
 * are rebuilt from the finish times of the newest 1,000 completed and failed jobs still kept
 * (exact while a queue keeps its finished jobs, a lower bound once they are trimmed).
 */
export async function perMinuteSeries(queue: Queue, minutes: number, now = Date.now()): Promise<Series> {
  const newestMinute = Math.floor(now / MINUTE) * MINUTE;
  const [completed, failed] = await Promise.all([
    queue.getMetrics('completed', 0, minutes - 1),
    queue.getMetrics('failed', 0, minutes - 1),
  ]);
  if (completed.meta.count > 0 || failed.meta.count > 0 || completed.data.length > 0 || failed.data.length > 0) {
    const pad = (data: number[]): number[] => Array.from({ length: minutes }, (_, i) => data[i] ?? 0);
    // The minute being filled is not stored: index 0 is the minute before the current one.
    return { source: 'metrics', newestMinute: newestMinute - MINUTE, completed: pad(completed.data), failed: pad(failed.data) };
  }
  const bucket = async (state: 'completed' | 'failed'): Promise<number[]> => {
    const counts = new Array<number>(minutes).fill(0);
    const jobs = await queue.getJobs(state, 0, 999, false);
    for (const job of jobs) {
      const at = job.finishedOn ?? job.timestamp;
      const i = Math.floor((newestMinute + MINUTE - 1 - at) / MINUTE);
      if (i >= 0 && i < minutes) counts[i]++;
    }
    return counts;
  };
  const [c, f] = await Promise.all([bucket('completed'), bucket('failed')]);
  return { source: 'sample', newestMinute, completed: c, failed: f };
}

/** Wait (added to started) and run (started to finished) percentiles of the newest finished jobs. */
export interface Latency {
  /** Jobs the figures come from (the newest completed, at most 500). */
  sample: number;
  waitP50: number | null;
  waitP95: number | null;
  runP50: number | null;
  runP95: number | null;
}

const percentile = (sorted: number[], p: number): number | null =>
  sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

/** {@link Latency} from the newest 500 completed jobs. */
export async function latency(queue: Queue): Promise<Latency> {
  const jobs = await queue.getJobs('completed', 0, 499, false);
  const waits: number[] = [];
  const runs: number[] = [];
  for (const job of jobs) {
    if (job.processedOn === undefined || job.finishedOn === undefined) continue;
    waits.push(Math.max(0, job.processedOn - job.timestamp - (job.delay ?? 0)));
    runs.push(Math.max(0, job.finishedOn - job.processedOn));
  }
  waits.sort((a, b) => a - b);
  runs.sort((a, b) => a - b);
  return {
    sample: waits.length,
    waitP50: percentile(waits, 50),
    waitP95: percentile(waits, 95),
    runP50: percentile(runs, 50),
    runP95: percentile(runs, 95),
  };
}

/** The options of a duplicate: the original's, less what makes a job unique or ties it to others. */
export function duplicateOptions(opts: JobsOptions): JobsOptions {
  const copy: JobsOptions & Record<string, unknown> = { ...opts };
  for (const key of ['jobId', 'repeat', 'repeatJobKey', 'deduplication', 'debounce', 'parent', 'timestamp', 'prevMillis', 'delay'])
    delete copy[key];
  return copy;
}

/** Chunks of a job's output the job view shows at most (the first ones of its latest attempt). */
export const MAX_OUTPUT_CHUNKS = 500;

/** A job's stored output (`job.stream`), for the job view. */
export interface OutputView {
  chunks: { id: string; attempt: number; data: unknown }[];
  /** More chunks are stored than the view shows (past MAX_OUTPUT_CHUNKS or the reply's byte budget). */
  truncated: boolean;
}

/**
 * The stored output of job `id` (its latest attempt's chunks, at most MAX_OUTPUT_CHUNKS and what
 * the reply's budget leaves room for, each chunk through `show`), read in small pages so a job with
 * large chunks is never held whole; null when the backend keeps no output streams.
 */
export async function storedOutput(queue: Queue, id: string, show: (data: unknown) => unknown, budget: Budget): Promise<OutputView | null> {
  const chunks: OutputView['chunks'] = [];
  try {
    for await (const chunk of queue.readStream(id, { follow: false, pageSize: 10 })) {
      if (chunks.length === MAX_OUTPUT_CHUNKS || budget.spent) return { chunks, truncated: true };
      chunks.push({ id: chunk.id, attempt: chunk.attempt, data: budget.fit(show(chunk.data)) });
    }
  } catch (err) {
    if ((err as { name?: string }).name === 'BackendUnsupportedError') return null;
    throw err;
  }
  return { chunks, truncated: false };
}

/** Log lines the job view shows at most (the newest). */
export const MAX_LOG_LINES = 100;

/**
 * The newest log lines of job `id` (at most MAX_LOG_LINES, and what the budget has beyond `leave`
 * bytes, kept for what follows), oldest first, each through `show`; read newest first in pages of
 * 10; `count` is how many are stored.
 */
export async function storedLogs(
  queue: Queue,
  id: string,
  show: (line: string) => string,
  budget: Budget,
  leave: number,
): Promise<{ logs: string[]; count: number }> {
  const newest: string[] = [];
  let count = 0;
  const full = (): boolean => budget.left <= leave;
  for (let at = 0; at < MAX_LOG_LINES && !full(); at += 10) {
    const page = await queue.getJobLogs(id, at, Math.min(at + 10, MAX_LOG_LINES) - 1, false);
    count = page.count;
    for (const line of page.logs) {
      if (full()) break;
      newest.push(budget.fitText(show(line), Math.min(budget.maxValueBytes, budget.left - leave)));
    }
    if (page.logs.length < 10) break;
  }
  return { logs: newest.reverse(), count };
}
