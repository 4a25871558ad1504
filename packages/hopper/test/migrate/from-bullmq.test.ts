/**
 * hopper migrate, BullMQ -> Hopper, against deployments built by the real bullmq 6 and bullmq 5:
 * every state moves with its id and record, then Hopper workers finish every job exactly once.
 */
import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { useHopper } from '../helpers/hopper.js';
import { migrateFromBullMQ, summaryLine, isComplete, MigrationError } from '../../src/migrate/index.js';
import { buildDeployment, loadBull, useBullPrefixes } from './bullmq-deployment.js';

const env = useHopper();
const newBullPrefix = useBullPrefixes(env);

describe.each([6, 5] as const)('from BullMQ %i', (version) => {
  it('moves every state with its ids, order and record; Hopper runs each job once', async () => {
    const bull = await loadBull(version);
    const bp = newBullPrefix();
    const name = env.queueName('mig');
    const dep = await buildDeployment(bull, env.url, bp, name, 20);
    const report = await migrateFromBullMQ({ from: env.url, queue: name, prefix: bp, hopperPrefix: env.prefix, withHistory: true });
    expect(report.layout.version).toBe(version);
    expect(report.lost).toBe(0);
    expect(report.countsMatch).toBe(true);
    expect(isComplete(report)).toBe(true);
    expect(report.moved.waiting).toBe(dep.waiting.length + 2); // + the flow's two children
    expect(summaryLine(report)).toMatch(/^migrated \d+ jobs \(.*\), 0 schedulers; lost 0$/);

    const queue = env.queue(name);
    // Waiting order kept.
    const waiting = (await queue.getWaiting(0, -1)).map((j) => j.id);
    expect(waiting.slice(0, dep.waiting.length)).toEqual(dep.waiting);
    // Delayed due times to the ms.
    for (const d of dep.delayed) {
      const job = await queue.getJob(d.id);
      expect(await job!.getState()).toBe('delayed');
    }
    // Failed jobs keep their reason, attempts, logs, and can be retried.
    const failed = await queue.getJob(dep.failed[0]);
    expect(failed!.failedReason).toMatch(/^boom/);
    expect(failed!.attemptsMade).toBe(2);
    expect((await queue.getJobLogs(dep.failed[0])).logs).toContain(`line of ${dep.failed[0]}`);
    // Completed history keeps its return value.
    const done = await queue.getJob(dep.completed[0]);
    expect(done!.returnvalue).toEqual({ done: dep.completed[0] });
    expect(await done!.getState()).toBe('completed');
    // The parent waits for its children.
    expect(await queue.getJobState('P1')).toBe('waiting-children');
    // Nothing left in BullMQ but its meta and events.
    const r = new Redis(env.url);
    try {
      const left = (await r.keys(`${bp}:${name}:*`)).filter((k) => !/:(meta|events|id|pc|marker|hopper-migrate:(seq|ids))$/.test(k));
      // The deduplication key with a ttl stays until it expires, naming the moved job: a BullMQ
      // add with that id meanwhile is deduplicated onto it (and adds no job).
      const dedupKey = `${bp}:${name}:de:${dep.dedup.key}`;
      expect(left).toEqual([dedupKey]);
      expect(await r.get(dedupKey)).toBe(dep.dedup.id);
      expect(await r.pttl(dedupKey)).toBeGreaterThan(0);
      const bq = new bull.Queue(name, { connection: r, prefix: bp });
      const again = await bq.add('dedup', { x: 2 }, { deduplication: { id: dep.dedup.key, ttl: 600_000 } });
      await bq.close();
      expect(again.id).toBe(dep.dedup.id);
      expect(await r.exists(`${bp}:${name}:${dep.dedup.id}`)).toBe(0);
    } finally {
      r.disconnect();
    }
    // Hopper runs every ready job once; the parent after its children, with their values.
    await failed!.retry();
    const seen = new Map<string, number>();
    let parentValues: Record<string, unknown> | undefined;
    const expected = dep.waiting.length + dep.prioritized.length + 3 + 1; // + C1, C2, P1 + retried failure
    const all = new Promise<void>((resolve) => {
      const worker = env.worker(
        name,
        async (job) => {
          seen.set(job.id!, (seen.get(job.id!) ?? 0) + 1);
          if (job.id === 'P1') parentValues = await job.getChildrenValues();
          if ([...seen.values()].reduce((a, b) => a + b, 0) === expected) setImmediate(resolve);
          return { ran: job.id };
        },
        { concurrency: 10 },
      );
      void worker;
    });
    await all;
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    expect(seen.size).toBe(expected);
    expect(Object.values(parentValues ?? {})).toHaveLength(2);
  });
});

describe('refusals', () => {
  it('refuses an unknown layout, changing nothing', async () => {
    const bp = newBullPrefix();
    const r = new Redis(env.url);
    try {
      await r.hset(`${bp}:old:meta`, 'version', 'bullmq:4.17.0');
      await r.rpush(`${bp}:old:wait`, '1');
      const err = await migrateFromBullMQ({ from: env.url, queue: 'old', prefix: bp, hopperPrefix: env.prefix }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MigrationError);
      expect((err as MigrationError).reason).toBe('unknown-layout');
      expect((err as Error).message).toMatch(/bullmq:4\.17\.0.*BullMQ 5\.x and 6\.x/);
      expect(await r.lrange(`${bp}:old:wait`, 0, -1)).toEqual(['1']);
    } finally {
      r.disconnect();
    }
  });
});
