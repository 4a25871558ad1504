/**
 * Completer: collects the outcomes of finished attempts and hands them to the runtime in
 * batches, so many acknowledgements (and the next claim) share one round trip.
 */
import type { Completion, Failure } from '../backend/backend.js';
import type { Job } from '../job/job.js';

/** A finished attempt waiting to be recorded. */
export interface PendingAck<T extends Completion | Failure> {
  ack: T;
  job: Job;
  /** The processor's value (completions) or the error (failures). */
  outcome: unknown;
}

/** Largest batch per call: keeps each script's work bounded. */
export const MAX_ACK_BATCH = 500;

export class Completer {
  private completions: PendingAck<Completion>[] = [];
  private failures: PendingAck<Failure>[] = [];

  get pending(): number {
    return this.completions.length + this.failures.length;
  }

  addCompletion(item: PendingAck<Completion>): void {
    this.completions.push(item);
  }

  addFailure(item: PendingAck<Failure>): void {
    this.failures.push(item);
  }

  /** Takes the next batch (at most `max` items): failures first (rarer, and their retries are due sooner). */
  take(
    max = MAX_ACK_BATCH,
  ): { kind: 'fail'; items: PendingAck<Failure>[] } | { kind: 'complete'; items: PendingAck<Completion>[] } | undefined {
    if (this.failures.length > 0) return { kind: 'fail', items: this.failures.splice(0, max) };
    if (this.completions.length > 0) {
      if (this.completions.length <= max) {
        const items = this.completions;
        this.completions = [];
        return { kind: 'complete', items };
      }
      return { kind: 'complete', items: this.completions.splice(0, max) };
    }
    return undefined;
  }

  putBack(batch: { kind: 'fail'; items: PendingAck<Failure>[] } | { kind: 'complete'; items: PendingAck<Completion>[] }): void {
    if (batch.kind === 'fail') this.failures.unshift(...batch.items);
    else this.completions.unshift(...batch.items);
  }
}
