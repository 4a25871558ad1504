/**
 * Claims: every attempt a worker holds, from the moment the reply that claimed it arrives until
 * its outcome is recorded, it is released, or its lock is known lost. Nothing the worker claimed
 * can fall between the executor and the completer (a failure whose backoff is being computed, a
 * rate-limited job being put back, a reply that arrives while the worker closes): close waits
 * for, or releases, exactly these; orphan release after a reconnect spares exactly these.
 */
import type { Fence } from '../backend/backend.js';
import type { Job } from '../job/job.js';

/** One held attempt. */
export interface Claim extends Fence {
  readonly job: Job;
  /** Whether its processor was started (a reply that arrived during close is released unstarted). */
  started: boolean;
  /** Set once its outcome is handed to the completer: it is recorded, not released. */
  recording: boolean;
  /** Set once it is being released (close). */
  releasing: boolean;
  /** When it began to wait for a slot in the worker (`prefetch`; the clock's `now()`), if it did. */
  heldAt?: number;
}

export class Claims {
  /** Held attempts by lock token. */
  private readonly held = new Map<string, Claim>();
  private emptyWaiters: (() => void)[] = [];

  get size(): number {
    return this.held.size;
  }

  /** Records a claimed job (it carries its attempt's fence). */
  add(job: Job): Claim {
    const fence = job.fence as Fence;
    const claim: Claim = { job, token: fence.token, attempt: fence.attempt, started: false, recording: false, releasing: false };
    this.held.set(fence.token, claim);
    return claim;
  }

  get(token: string): Claim | undefined {
    return this.held.get(token);
  }

  /** The attempt is no longer held here (recorded, released, moved by its processor, or its lock lost). */
  drop(token: string): void {
    if (!this.held.delete(token) || this.held.size > 0) return;
    const waiters = this.emptyWaiters;
    this.emptyWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Every held attempt as (job id, token), flattened: what orphan release spares. */
  pairs(): string[] {
    const out: string[] = [];
    for (const claim of this.held.values()) out.push(claim.job.id as string, claim.token);
    return out;
  }

  /**
   * The held attempts neither being recorded nor released: running, about to run, or between
   * running and the completer (a failure whose backoff is being computed).
   */
  unsettled(): Claim[] {
    return [...this.held.values()].filter((claim) => !claim.recording && !claim.releasing);
  }

  /** Resolves when no attempt is held. */
  whenEmpty(): Promise<void> {
    if (this.held.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.emptyWaiters.push(resolve));
  }
}
