/**
 * Reading job output streams (`queue.readStream`): an async iterator that replays what a job's
 * processor wrote, then follows its live writes, in order, with no gap or duplicate at the switch
 * (both phases read by entry id: the live phase asks for entries after the last one replayed).
 *
 * Live reads share connections: every reader of a Queue waits through one OutputHub, which blocks
 * in one XREAD over all the streams its readers wait on (a lane of up to 500 streams per
 * connection), so 1,000 readers cost two connections, not 1,000. A reader joining while the lane
 * is blocked writes to the queue's wake stream, which the XREAD also watches.
 */
import { OUTPUT_WAIT_MAX, type OutputEntry, type QueueBackend } from '../backend/backend.js';
import { checkArgument, READ_STREAM_OPTIONS } from '../validation/arguments.js';
import { InvalidDataError, InvalidOptionsError } from '../job/errors.js';
import { sleep } from '../clock/timers.js';

/** One chunk of a job's output, as `queue.readStream` yields it. */
export interface StreamChunk<T = unknown> {
  /** The entry's id: pass it as `from` to resume after this chunk (an SSE `Last-Event-ID`). */
  id: string;
  /** The attempt that wrote it (1 for the first). A retried attempt's chunks carry a higher number. */
  attempt: number;
  /** The chunk: a string written as text, or the value written as JSON. */
  data: T;
}

/** Options of `queue.readStream`. */
export interface ReadStreamOptions {
  /** `'start'` (default) replays from the first chunk kept; a chunk's id resumes after that chunk. */
  from?: string;
  /** Ends the iteration (without an error) when aborted. */
  signal?: AbortSignal;
  /**
   * 'latest' (default): only the latest attempt's chunks (older attempts' are skipped, and when a
   * retry starts writing, its chunks follow with a higher `attempt`); 'all': every chunk kept.
   */
  attempts?: 'latest' | 'all';
  /** false: stop after what is stored (no live following). Default true. */
  follow?: boolean;
  /**
   * Chunks read per call while replaying what is stored (1 to 1,000; default 200). A reader that
   * may stop early (a viewer with a byte budget) reads small pages, so it never holds more than it shows.
   */
  pageSize?: number;
}

/** Chunks read per XRANGE page while replaying. */
const PAGE = 200;
/** How long one shared XREAD blocks; a reader with nothing new re-checks its job's state this often. */
export const OUTPUT_BLOCK_MS = 2_000;

/** Compares two stream entry ids (`<ms>-<seq>`). */
function compareIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(Number);
  const [bm, bs] = b.split('-').map(Number);
  return am - bm || as - bs;
}

interface Waiter {
  id: string;
  after: string;
  since: number;
  resolve: (entries: OutputEntry[] | null) => void;
}

/** The live waits of one Queue's readers, on shared blocking connections (one per lane of 500 streams). */
export class OutputHub {
  private readonly waiters = new Set<Waiter>();
  private readonly lanes: boolean[] = [];
  private wake = '';
  private closed = false;

  constructor(private readonly backend: QueueBackend) {}

  /**
   * Resolves with entries of job `id` after `after` as soon as there are some, [] when
   * OUTPUT_BLOCK_MS passed without any (the caller checks its job), null when aborted or closed.
   */
  wait(id: string, after: string, signal: AbortSignal | undefined): Promise<OutputEntry[] | null> {
    if (this.closed || signal?.aborted) return Promise.resolve(null);
    return new Promise((resolve) => {
      const onAbort = (): void => {
        this.waiters.delete(waiter);
        resolve(null);
      };
      const waiter: Waiter = {
        id,
        after,
        since: Date.now(),
        resolve: (entries) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(entries);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(waiter);
      this.ensureLanes();
    });
  }

  /** Ends every wait (their readers end). */
  close(): void {
    this.closed = true;
    for (const waiter of this.waiters) waiter.resolve(null);
    this.waiters.clear();
  }

  /** Starts the lanes the waiting streams need; a lane already blocked is woken to take new streams. */
  private ensureLanes(): void {
    const streams = new Set([...this.waiters].map((w) => w.id)).size;
    const needed = Math.max(1, Math.ceil(streams / OUTPUT_WAIT_MAX));
    let running = 0;
    for (let lane = 0; lane < needed; lane++) {
      if (this.lanes[lane]) {
        running++;
        continue;
      }
      this.lanes[lane] = true;
      void this.runLane(lane);
    }
    if (running > 0) this.backend.wakeOutputWaits().catch(() => undefined);
  }

  /** The waiters of `lane`: the streams of the lane-th slice of distinct job ids. */
  private laneWaiters(lane: number): Waiter[] {
    const ids = [...new Set([...this.waiters].map((w) => w.id))].slice(lane * OUTPUT_WAIT_MAX, (lane + 1) * OUTPUT_WAIT_MAX);
    const chosen = new Set(ids);
    return [...this.waiters].filter((w) => chosen.has(w.id));
  }

  private async runLane(lane: number): Promise<void> {
    try {
      while (!this.closed) {
        const waiters = this.laneWaiters(lane);
        if (waiters.length === 0) break;
        // One read per stream, from the earliest position any of its readers needs.
        const from = new Map<string, string>();
        for (const w of waiters) {
          const known = from.get(w.id);
          if (known === undefined || compareIds(w.after, known) < 0) from.set(w.id, w.after);
        }
        const reads = [...from].map(([id, after]) => ({ id, after }));
        let result;
        try {
          result = await this.backend.waitOutput(lane, reads, this.wake, OUTPUT_BLOCK_MS, PAGE);
        } catch {
          if (this.closed) break;
          // A connection error: the readers re-check their jobs and wait again.
          for (const w of waiters) this.settle(w, []);
          continue;
        }
        this.wake = result.wake;
        const now = Date.now();
        for (const w of waiters) {
          if (!this.waiters.has(w)) continue;
          const fresh = (result.entries.get(w.id) ?? []).filter((e) => compareIds(e.id, w.after) > 0);
          if (fresh.length > 0) this.settle(w, fresh);
          else if (now - w.since >= OUTPUT_BLOCK_MS) this.settle(w, []);
        }
      }
    } finally {
      this.lanes[lane] = false;
      // A waiter that arrived as the lane stopped still gets one.
      if (!this.closed && this.laneWaiters(lane).length > 0) this.ensureLanes();
    }
  }

  private settle(w: Waiter, entries: OutputEntry[]): void {
    this.waiters.delete(w);
    w.resolve(entries);
  }
}

/** Checks `readStream`'s options; throws InvalidDataError for a bad one. */
function checkOptions(opts: ReadStreamOptions): string {
  try {
    checkArgument(READ_STREAM_OPTIONS, opts, 'readStream(jobId, opts)');
  } catch (err) {
    // readStream's refusals are InvalidDataErrors (as documented), with the validation layer's message.
    if (err instanceof InvalidOptionsError) throw new InvalidDataError(err.message, { cause: err });
    throw err;
  }
  const from = opts.from ?? 'start';
  return from === 'start' ? '0-0' : from;
}

/**
 * Whether job `jobId`'s output is over once attempt `ended` wrote its end entry: the job finished
 * for good (completed, failed, removed), or that attempt was the last one its `attempts` allow.
 * While the attempt still runs with a retry possible (its end written, its outcome not yet
 * recorded), the job is looked at again after a short wait (25 ms, doubling to 1 s). False as
 * soon as a retry is due or under way: its chunks follow.
 */
async function outputOver(backend: QueueBackend, jobId: string, ended: number, signal: AbortSignal | undefined): Promise<boolean> {
  for (let wait = 25; ; wait = Math.min(wait * 2, 1_000)) {
    const job = await backend.getJob(jobId);
    if (!job || job.state === 'completed' || job.state === 'failed') return true;
    if (job.state !== 'active' || job.attemptsStarted > ended) return false;
    if (ended >= attemptsAllowed(job.opts)) return true;
    if (signal?.aborted) return true;
    await sleep(wait, { signal, ref: false });
  }
}

/** The `attempts` a job's stored options allow (at least 1). */
function attemptsAllowed(opts: string | undefined): number {
  try {
    const attempts = (JSON.parse(opts ?? '{}') as { attempts?: unknown }).attempts;
    return typeof attempts === 'number' && attempts > 1 ? attempts : 1;
  } catch {
    return 1;
  }
}

/**
 * `queue.readStream(jobId, opts)`: replays the job's output, then follows it live, across its
 * attempts: an attempt's end entry (`job.stream.end()`) ends the read only when the job is
 * finished for good (completed, or failed with no retry left) or removed; otherwise the retry's
 * chunks follow ('latest' and 'all' alike). It also ends when the job finishes and everything
 * written was read, or when `signal` aborts.
 */
export async function* readOutput(
  backend: QueueBackend,
  hub: () => OutputHub,
  ready: () => Promise<void>,
  jobId: string,
  opts: ReadStreamOptions = {},
): AsyncGenerator<StreamChunk> {
  let after = checkOptions(opts);
  const pageSize = opts.pageSize ?? PAGE;
  const latestOnly = (opts.attempts ?? 'latest') === 'latest';
  await ready();
  let attempt = latestOnly ? ((await backend.lastOutput(jobId))?.attempt ?? 0) : 0;
  /** The attempt whose end entry is the last entry read (nothing of a later attempt after it), if any. */
  let ended: number | undefined;
  // The chunks of `entries` to yield (an older attempt's skipped by 'latest'); notes an end entry.
  const take = (entries: OutputEntry[]): StreamChunk[] => {
    const chunks: StreamChunk[] = [];
    for (const e of entries) {
      after = e.id;
      if (latestOnly && e.attempt < attempt) continue;
      attempt = Math.max(attempt, e.attempt);
      if (e.kind === 'end') {
        if (e.attempt >= attempt) ended = e.attempt;
        continue;
      }
      ended = undefined;
      chunks.push({ id: e.id, attempt: e.attempt, data: e.kind === 'json' ? JSON.parse(e.value) : e.value });
    }
    return chunks;
  };
  // The job writes nothing more: what is stored after the last entry read, then the end.
  const drain = async function* (): AsyncGenerator<StreamChunk> {
    for (;;) {
      const page = await backend.readOutput(jobId, after, PAGE);
      yield* take(page);
      if (page.length < PAGE) return;
    }
  };
  // Whether the end entry just read ends the read (else a retry follows: keep following).
  const over = async (): Promise<boolean> => {
    if (ended === undefined) return false;
    const last = ended;
    ended = undefined;
    return outputOver(backend, jobId, last, opts.signal);
  };
  // Replay: pages of what is stored.
  for (;;) {
    if (opts.signal?.aborted) return;
    const page = await backend.readOutput(jobId, after, pageSize);
    yield* take(page);
    if (page.length < pageSize) break;
  }
  if (await over()) {
    yield* drain();
    return;
  }
  if (opts.follow === false) return;
  // Live: wait for entries after the last one read.
  for (;;) {
    const entries = await hub().wait(jobId, after, opts.signal);
    if (entries === null) return;
    if (entries.length > 0) {
      yield* take(entries);
      if (await over()) {
        yield* drain();
        return;
      }
      continue;
    }
    // Nothing new for a while: a finished or removed job writes nothing more.
    const state = await backend.getState(jobId);
    if (state === 'completed' || state === 'failed' || state === 'unknown') {
      yield* drain();
      return;
    }
  }
}
