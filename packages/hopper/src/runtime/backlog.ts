/**
 * Backlog: the jobs a worker holds ahead of its free slots (the `prefetch` option). A claim asks
 * for up to `concurrency + prefetch - held` jobs; those with no free slot wait here, in claim
 * order, and start the moment a slot frees, without a round trip. They are active in Redis (their
 * locks are renewed with the running jobs', and stall rescue takes them over if the worker dies),
 * and held (Claims) like the running ones: close and pause hand them back unstarted, a lost lock
 * drops one, a cancelled one ends as cancelled without starting.
 */
import type { Claim } from './claims.js';

export class Backlog {
  /** Waiting claims by lock token, in claim order (a Map keeps insertion order). */
  private readonly waiting = new Map<string, Claim>();

  get size(): number {
    return this.waiting.size;
  }

  /** Adds a claimed job that has no free slot yet. */
  push(claim: Claim): void {
    this.waiting.set(claim.token, claim);
  }

  /** Takes the oldest waiting claim, if any. */
  shift(): Claim | undefined {
    for (const claim of this.waiting.values()) {
      this.waiting.delete(claim.token);
      return claim;
    }
    return undefined;
  }

  /** Takes the claim of lock `token` out, if it waits here. */
  take(token: string): Claim | undefined {
    const claim = this.waiting.get(token);
    if (claim) this.waiting.delete(token);
    return claim;
  }

  /** Takes the waiting claim of job `id` out, if any (walks the backlog: at most `prefetch` entries). */
  takeJob(id: string): Claim | undefined {
    for (const claim of this.waiting.values()) {
      if (claim.job.id === id) {
        this.waiting.delete(claim.token);
        return claim;
      }
    }
    return undefined;
  }

  has(token: string): boolean {
    return this.waiting.has(token);
  }

  /** Takes every waiting claim out (close, pause). */
  takeAll(): Claim[] {
    const all = [...this.waiting.values()];
    this.waiting.clear();
    return all;
  }

  /** The waiting claims' locks, to renew with the running jobs'. */
  locks(): { id: string; token: string; attempt: number }[] {
    const out: { id: string; token: string; attempt: number }[] = [];
    for (const claim of this.waiting.values()) out.push({ id: claim.job.id as string, token: claim.token, attempt: claim.attempt });
    return out;
  }
}
