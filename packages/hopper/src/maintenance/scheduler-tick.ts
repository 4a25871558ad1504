/**
 * SchedulerTick: gives job schedulers their next occurrences. When an occurrence falls due, the
 * claim script decides its fate (run, skip for overlap, missed) and marks its scheduler due; this
 * service (in every worker, and in the Queue at upsert) computes the next occurrences in
 * TypeScript, where the cron and time-zone rules live, and stores them with a script guarded by
 * the scheduler's last instant: any number of processes may run it, each occurrence is created
 * once. It runs when a claim reports a due scheduler, and every `interval` as a fallback.
 * A worker that takes a scheduler's pending occurrence advances its scheduler first
 * ({@link advanceTaken}), as BullMQ plans the next job when a worker takes the current one.
 */
import type { QueueBackend } from '../backend/backend.js';
import type { Clock, ClockTimer } from '../clock/clock.js';
import { planAdvance } from '../schedule/advance-plan.js';
import { isOccurrenceId } from '../schedule/occurrence-id.js';
import type { ScheduleSpec } from '../schedule/repeat-options.js';

/** Most schedulers advanced per run. */
const BATCH = 100;

export interface SchedulerTickOptions {
  backend: QueueBackend;
  clock: Clock;
  /** Fallback period, ms. */
  interval: number;
  onError(err: unknown): void;
}

/**
 * Advances one scheduler (again if another process advanced it meanwhile, or if its pending
 * occurrence, due at once, was dropped by its overlap policy). Returns occurrences created.
 */
export async function advanceScheduler(backend: QueueBackend, clock: Clock, id: string): Promise<number> {
  let created = 0;
  for (let round = 0; round < 4; round++) {
    const record = await backend.getScheduler(id);
    if (!record) return created;
    if (record.paused) {
      const result = await backend.advanceScheduler(id, record.last, [], null, 0, clock.backendNow());
      return created + (result.kind === 'advanced' ? result.created : 0);
    }
    const spec = JSON.parse(record.spec) as ScheduleSpec;
    const now = clock.backendNow() ?? (await backend.time());
    const plan = planAdvance({
      schedulerId: id,
      spec,
      last: record.last === '' ? null : Number(record.last),
      created: record.created,
      now,
    });
    const result = await backend.advanceScheduler(id, record.last, plan.occurrences, plan.after, plan.missed, clock.backendNow());
    if (result.kind === 'raced') continue;
    if (result.kind === 'missing') return created;
    created += result.created;
    if (!result.again) return created;
  }
  return created;
}

/**
 * A worker took job `jobId` of scheduler `schedulerId`: if it was the scheduler's pending
 * occurrence (ready and not yet advanced past, e.g. a new `every` schedule's first run), the
 * scheduler plans its next one now, before the job runs, as BullMQ does. Otherwise a no-op (one
 * read). Returns occurrences created.
 */
export async function advanceTaken(backend: QueueBackend, clock: Clock, schedulerId: string, jobId: string): Promise<number> {
  const record = await backend.getScheduler(schedulerId);
  if (!record || record.pendingId !== jobId) return 0;
  return advanceScheduler(backend, clock, schedulerId);
}

/**
 * The scheduler whose occurrence `job` is, when a worker has just taken it for its first attempt
 * (a retry is an ordinary job); else undefined.
 */
export function takenOccurrence(job: { id?: string; repeatJobKey?: string; attemptsStarted: number }): string | undefined {
  if (job.attemptsStarted !== 1 || !job.repeatJobKey || job.id === undefined || !isOccurrenceId(job.id)) return undefined;
  return job.repeatJobKey;
}

export class SchedulerTick {
  private timer: ClockTimer | undefined;
  private dueTimer: ClockTimer | undefined;
  private running = false;
  private busy: Promise<number> | undefined;
  private again = false;

  constructor(private readonly o: SchedulerTickOptions) {}

  start(): void {
    this.running = true;
    this.runSoon();
  }

  stop(): void {
    this.running = false;
    this.timer?.cancel();
    this.timer = undefined;
    this.dueTimer?.cancel();
    this.dueTimer = undefined;
  }

  /** Runs as soon as the current run (if any) ends. */
  runSoon(): void {
    if (!this.running) return;
    if (this.busy) {
      this.again = true;
      return;
    }
    this.timer?.cancel();
    this.busy = this.runOnce();
    this.busy
      .catch((err: unknown) => this.report(err))
      .finally(() => {
        this.busy = undefined;
        if (this.again) {
          this.again = false;
          this.runSoon();
        } else if (this.running) {
          this.timer = this.o.clock.setTimeout(() => this.runSoon(), this.o.interval);
        }
      });
  }

  /**
   * Advances every scheduler marked due (up to 100), then arms a timer for the earliest pending
   * occurrence: at its due time the occurrence is promoted (a claim of no job), so its overlap
   * and catch-up rules are judged on time even when every worker is busy. Returns the
   * occurrences created.
   */
  async runOnce(): Promise<number> {
    let created = 0;
    const at = this.o.clock.backendNow() ?? (await this.o.backend.time());
    for (const id of await this.o.backend.getDueSchedulers(BATCH, at)) {
      created += await advanceScheduler(this.o.backend, this.o.clock, id);
    }
    const due = await this.o.backend.nextSchedulerDue();
    this.dueTimer?.cancel();
    this.dueTimer = undefined;
    if (due !== null && this.running) {
      const now = this.o.clock.backendNow() ?? (await this.o.backend.time());
      const wait = Math.max(0, due - now);
      this.dueTimer = this.o.clock.setTimeout(() => {
        this.dueTimer = undefined;
        this.promoteDue(wait > 0).catch((err: unknown) => this.report(err));
      }, wait);
    }
    return created;
  }

  /**
   * Reports a failed run, unless the tick was stopped meanwhile: the worker is closing and its
   * connection may be gone; nothing is lost (advancing is guarded and promotion happens at the
   * next claim of any worker).
   */
  private report(err: unknown): void {
    if (this.running) this.o.onError(err);
  }

  /**
   * Promotes due delayed jobs (scheduler occurrences among them) without claiming any, then runs
   * again if that made a scheduler due, or if this was a wake-up at a scheduler's due time (one
   * whose ready occurrence no worker has taken advances then). A timer armed for a time already
   * past only promotes, so a due time that stays in the past cannot make it spin.
   */
  private async promoteDue(woke: boolean): Promise<void> {
    const result = await this.o.backend.claim({ count: 0, lockMs: 1, tokenPrefix: 'promote:' }, this.o.clock.backendNow());
    if (result.schedulersDue || woke) this.runSoon();
  }
}
