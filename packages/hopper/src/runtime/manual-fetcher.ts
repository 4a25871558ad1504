/**
 * ManualFetcher: `worker.getNextJob(token)` for manual processing. One claim under the caller's
 * exact token; as in BullMQ, a blocking call waits (up to drainDelay) only once a previous call
 * found the queue drained, so the first call on an empty queue returns at once.
 */
import type { ClaimedJob, QueueBackend } from '../backend/backend.js';
import type { Clock } from '../clock/clock.js';

export interface ManualFetcherOptions {
  backend: QueueBackend;
  clock: Clock;
  lockDuration: number;
  limiter?: { max: number; duration: number; weighted?: boolean };
  /** The worker's name, recorded as processedBy. */
  workerName?: string;
  /** Longest blocking wait, ms. */
  drainDelayMs: number;
  /** Whether the worker is paused or closing (nothing is taken then). */
  stopped(): boolean;
}

export class ManualFetcher {
  /** The last call found no job: the next blocking call waits for one. */
  private drained = false;

  constructor(private readonly o: ManualFetcherOptions) {}

  /** Claims the next job under `token`, or undefined (none ready, paused, closing). */
  async next(token: string, block: boolean): Promise<{ claimed: ClaimedJob; now: number } | undefined> {
    for (let round = 0; round < 2; round++) {
      if (this.o.stopped()) return undefined;
      const { backend, clock } = this.o;
      const result = await backend.claim(
        { count: 1, lockMs: this.o.lockDuration, tokenPrefix: token, exact: true, limiter: this.o.limiter, by: this.o.workerName },
        clock.backendNow(),
      );
      const claimed = result.jobs[0];
      if (claimed) {
        this.drained = false;
        return { claimed, now: result.now };
      }
      const wait = block && this.drained && round === 0 && !result.paused;
      this.drained = true;
      if (!wait) return undefined;
      await backend.waitForWork(this.o.drainDelayMs);
    }
    return undefined;
  }
}
