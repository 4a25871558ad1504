/**
 * Manual processing helpers for the group tests: claim jobs one at a time with a worker without
 * a processor (each claim one step the test controls), and complete them.
 */
import type { Job, Worker } from '../../src/index.js';

/** A claimed job with the token it was claimed under. */
export interface Held {
  job: Job;
  token: string;
}

let tokens = 0;

/** Claims jobs one at a time with a manual worker until none is ready (or `max` are taken). */
export async function claimAll(worker: Worker, max = 100): Promise<Held[]> {
  const held: Held[] = [];
  while (held.length < max) {
    const token = `tok${++tokens}`;
    const job = await worker.getNextJob(token);
    if (!job) break;
    held.push({ job, token });
  }
  return held;
}

export const names = (held: Held[]): string[] => held.map((h) => h.job.name);

export async function completeAll(held: Held[]): Promise<void> {
  for (const { job, token } of held) await job.moveToCompleted('ok', token, false);
}

/** Claims and completes one job at a time until none is ready; returns their names in order. */
export async function runInOrder(worker: Worker): Promise<string[]> {
  const order: string[] = [];
  for (;;) {
    const [held] = await claimAll(worker, 1);
    if (!held) return order;
    order.push(held.job.name);
    await completeAll([held]);
  }
}
