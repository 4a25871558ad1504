/**
 * Builds a BullMQ deployment with the real `bullmq` package (6.x, or 5.x through the `bullmq5`
 * alias) for the migration tests: jobs in every state, flows, schedulers, deduplicated jobs, logs,
 * progress, failures. Each test gets its own BullMQ prefix, deleted afterwards.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach } from 'vitest';

/** The parts of BullMQ's module the tests use (5 and 6 share them). */
export interface BullModule {
  Queue: new (name: string, opts: Record<string, unknown>) => BullQueue;
  Worker: new (name: string, processor: unknown, opts: Record<string, unknown>) => BullWorker;
  FlowProducer: new (opts: Record<string, unknown>) => { add(flow: unknown): Promise<unknown>; close(): Promise<void> };
}
export interface BullQueue {
  add(name: string, data: unknown, opts?: Record<string, unknown>): Promise<{ id?: string }>;
  addBulk(jobs: { name: string; data: unknown; opts?: Record<string, unknown> }[]): Promise<{ id?: string }[]>;
  upsertJobScheduler(id: string, repeat: Record<string, unknown>, template?: Record<string, unknown>): Promise<unknown>;
  pause(): Promise<void>;
  getJobCounts(...states: string[]): Promise<Record<string, number>>;
  close(): Promise<void>;
}
export interface BullJob {
  id?: string;
  log(line: string): Promise<unknown>;
  updateProgress(p: unknown): Promise<void>;
  moveToFailed(err: Error, token: string, fetchNext?: boolean): Promise<unknown>;
  moveToCompleted(value: unknown, token: string, fetchNext?: boolean): Promise<unknown>;
}
export interface BullWorker {
  getNextJob(token: string): Promise<BullJob | undefined>;
  close(force?: boolean): Promise<void>;
  run(): Promise<void>;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
}

export async function loadBull(version: 5 | 6): Promise<BullModule> {
  return (version === 6 ? await import('bullmq') : await import('bullmq5')) as unknown as BullModule;
}

/** A BullMQ prefix for one test, and a cleanup. */
export function bullPrefix(): string {
  return `b${randomBytes(4).toString('hex')}`;
}

/**
 * BullMQ prefixes for the tests of a file: each call of the returned function gives a fresh one,
 * whose keys are deleted after the test (on the Redis at `env.url`).
 */
export function useBullPrefixes(env: { readonly url: string }): () => string {
  const prefixes: string[] = [];
  afterEach(async () => {
    for (const p of prefixes.splice(0)) await deleteKeys(env.url, `${p}:*`);
  });
  return () => {
    const bp = bullPrefix();
    prefixes.push(bp);
    return bp;
  };
}

export async function deleteKeys(url: string, pattern: string): Promise<void> {
  const r = new Redis(url);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await r.del(...keys);
    } while (cursor !== '0');
  } finally {
    r.disconnect();
  }
}

/** What a small deployment holds, by the ids the tests check. */
export interface Deployment {
  waiting: string[];
  prioritized: string[];
  delayed: { id: string; due: number }[];
  failed: string[];
  completed: string[];
  parents: string[];
  children: string[];
  dedup: { id: string; key: string };
}

/**
 * Adds a few of each kind to BullMQ queue `queue`: `n` waiting (FIFO), `n` prioritized, `n`
 * delayed (due in one hour to one day), failures and completions with logs and progress (run by
 * hand through getNextJob), a flow (a parent waiting for one completed and one waiting child), a
 * deduplicated job with a ttl.
 */
export async function buildDeployment(bull: BullModule, url: string, prefix: string, queue: string, n: number): Promise<Deployment> {
  const connection = { url, maxRetriesPerRequest: null } as Record<string, unknown>;
  const conn = new Redis(url, { maxRetriesPerRequest: null });
  const q = new bull.Queue(queue, { connection: conn, prefix });
  const fp = new bull.FlowProducer({ connection: conn, prefix });
  const d: Deployment = {
    waiting: [],
    prioritized: [],
    delayed: [],
    failed: [],
    completed: [],
    parents: [],
    children: [],
    dedup: { id: '', key: '' },
  };
  try {
    // Finished ones first: a worker takes from the head of the line, so these go through it alone.
    for (let i = 0; i < Math.max(2, Math.floor(n / 5)); i++) {
      // No backoff: the first failure goes straight back to wait (a backoff would leave it delayed
      // when the loop below ends first, a race with the machine's speed).
      await q.add('will-fail', { i }, { jobId: `f${i}`, attempts: 2 });
      await q.add('will-complete', { i }, { jobId: `c${i}` });
    }
    const w = new bull.Worker(queue, null, { connection: conn, prefix, autorun: false });
    for (let i = 0; ; i++) {
      const token = `tok${i}`;
      const job = await w.getNextJob(token);
      if (!job) break;
      await job.log(`line of ${job.id}`);
      await job.updateProgress(42);
      if (String(job.id).startsWith('f')) {
        // attempts 2: the first failure retries (back to wait after its backoff); fail it for good by exhausting attempts
        await job.moveToFailed(new Error(`boom ${job.id}`), token, false);
        if (!d.failed.includes(String(job.id))) d.failed.push(String(job.id));
      } else {
        await job.moveToCompleted({ done: job.id }, token, false);
        d.completed.push(String(job.id));
      }
    }
    await w.close();
    const adds = [];
    for (let i = 0; i < n; i++) adds.push({ name: 'plain', data: { i }, opts: { jobId: `w${i}`, attempts: 3 } });
    await q.addBulk(adds);
    d.waiting = adds.map((a) => a.opts.jobId);
    for (let i = 0; i < n; i++) {
      await q.add('urgent', { i }, { jobId: `p${i}`, priority: 1 + (i % 3) });
      d.prioritized.push(`p${i}`);
    }
    const now = Date.now();
    for (let i = 0; i < n; i++) {
      const delay = 3_600_000 + i * 60_000;
      await q.add('later', { i }, { jobId: `d${i}`, delay });
      d.delayed.push({ id: `d${i}`, due: now + delay });
    }
    await q.add('dedup', { x: 1 }, { jobId: 'dd1', deduplication: { id: 'dk1', ttl: 600_000 }, delay: 7_200_000 });
    d.dedup = { id: 'dd1', key: 'dk1' };
    await fp.add({
      name: 'parent',
      queueName: queue,
      data: { p: 1 },
      opts: { jobId: 'P1' },
      children: [
        { name: 'child', queueName: queue, data: { c: 1 }, opts: { jobId: 'C1' } },
        { name: 'child', queueName: queue, data: { c: 2 }, opts: { jobId: 'C2' } },
      ],
    });
    d.parents.push('P1');
    d.children.push('C1', 'C2');
    void connection;
    return d;
  } finally {
    await fp.close();
    await q.close();
    conn.disconnect();
  }
}
