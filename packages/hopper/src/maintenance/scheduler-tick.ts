/**
 * SchedulerTick: gives job schedulers their next occurrences. When an occurrence falls due, the
 * claim script decides its fate (run, skip for overlap, missed) and marks its scheduler due; this
 * service (in every worker, and in the Queue at upsert) computes the next occurrences in
 * TypeScript, where the cron and time-zone rules live, and stores them with a script guarded by
 * the scheduler's last instant: any number of processes may run it, each occurrence is created
 * once. It runs when a claim reports a due scheduler, and every `interval` as a fallback.
 */
import type { QueueBackend } from '../backend/backend.js';
import type { Clock, ClockTimer } from '../clock/clock.js';
import { planAdvance } from '../schedule/advance-plan.js';
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

/** Advances one scheduler (retrying once if another process advanced it meanwhile). Returns occurrences created. */
export async function advanceScheduler(backend: QueueBackend, clock: Clock, id: string): Promise<number> {
  for (let round = 0; round < 3; round++) {
    const record = await backend.getScheduler(id);
    if (!record) return 0;
    if (record.paused) return backend.advanceScheduler(id, record.last, [], null, 0, clock.backendNow());
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
    if (result !== -2) return Math.max(result, 0);
  }
  return 0;
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
    for (const id of await this.o.backend.getDueSchedulers(BATCH)) {
      created += await advanceScheduler(this.o.backend, this.o.clock, id);
    }
    const due = await this.o.backend.nextSchedulerDue();
    this.dueTimer?.cancel();
    this.dueTimer = undefined;
    if (due !== null && this.running) {
      const now = this.o.clock.backendNow() ?? (await this.o.backend.time());
      this.dueTimer = this.o.clock.setTimeout(
        () => {
          this.dueTimer = undefined;
          this.promoteDue().catch((err: unknown) => this.report(err));
        },
        Math.max(0, due - now),
      );
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

  /** Promotes due delayed jobs (scheduler occurrences among them) without claiming any. */
  private async promoteDue(): Promise<void> {
    const result = await this.o.backend.claim({ count: 0, lockMs: 1, tokenPrefix: 'promote:' }, this.o.clock.backendNow());
    if (result.schedulersDue) this.runSoon();
  }
}
