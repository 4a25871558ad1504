/**
 * StallRescuer: every `stalledInterval`, returns jobs whose lock expired (their worker died or
 * its event loop was blocked) to waiting, or fails them after `maxStalledCount` stalls. At most
 * one worker per queue runs the check in each interval (the script keeps a check key).
 */
import type { QueueBackend, RescueResult, Retention } from '../backend/backend.js';
import type { Clock, ClockTimer } from '../clock/clock.js';

export interface StallRescuerOptions {
  backend: QueueBackend;
  clock: Clock;
  stalledInterval: number;
  maxStalledCount: number;
  /** Retention of jobs it fails that have no removeOnFail of their own. */
  failKeep: Retention;
  /** Events older than this are trimmed at each check (0 = no age cap). */
  eventsMaxAgeMs: number;
  onRescued(ids: string[]): void;
  onFailed(ids: string[]): void;
  onError(err: unknown): void;
}

/** Most jobs one script call handles (bounds each call's work, retention trims included). */
export const RESCUE_BATCH = 500;

export class StallRescuer {
  private timer: ClockTimer | undefined;
  private running = false;

  constructor(private readonly o: StallRescuerOptions) {}

  /** Runs a check now, then one every interval. */
  start(): void {
    this.running = true;
    this.tick();
  }

  stop(): void {
    this.running = false;
    this.timer?.cancel();
    this.timer = undefined;
  }

  private tick(): void {
    if (!this.running) return;
    this.runOnce().then(
      () => this.schedule(),
      (err: unknown) => {
        this.o.onError(err);
        this.schedule();
      },
    );
  }

  private schedule(): void {
    if (!this.running) return;
    this.timer = this.o.clock.setTimeout(() => this.tick(), this.o.stalledInterval);
  }

  /**
   * Runs one check: calls of at most RESCUE_BATCH jobs each, until a call finds fewer expired
   * locks. `force` runs it even if another worker checked within the interval (tests and tools
   * use it to drive the rescue by hand).
   */
  async runOnce(force = false): Promise<RescueResult> {
    const total: RescueResult = { now: 0, ran: false, rescued: [], failed: [], expired: 0 };
    // Later calls of the same check run whatever the interval key says: this check holds it.
    for (let first = true; ; first = false) {
      const result = await this.o.backend.rescueStalled(
        {
          maxStalledCount: this.o.maxStalledCount,
          limit: RESCUE_BATCH,
          intervalMs: this.o.stalledInterval,
          force: force || !first,
          failKeep: this.o.failKeep,
          eventsMaxAgeMs: this.o.eventsMaxAgeMs,
        },
        this.o.clock.backendNow(),
      );
      total.now = result.now;
      total.ran ||= result.ran;
      total.expired += result.expired;
      if (result.rescued.length > 0) this.o.onRescued(result.rescued);
      if (result.failed.length > 0) this.o.onFailed(result.failed);
      total.rescued.push(...result.rescued);
      total.failed.push(...result.failed);
      if (!result.ran || result.expired < RESCUE_BATCH) return total;
    }
  }
}
