/**
 * hopper migrate and deduplication across the switch, with the real bullmq 6 and bullmq 5:
 * - a deduplication id with a ttl whose job finished in BullMQ is carried to Hopper: a Hopper add
 *   with it is deduplicated onto that job id until the ttl ends, as BullMQ's add would be;
 * - while the bridge runs, a moved job's deduplication key without ttl keeps deduplicating BullMQ
 *   adds onto the moved job until it finishes in Hopper; then BullMQ's key goes, and a BullMQ add
 *   with that id makes a new job (which the bridge moves).
 */
import { describe, expect, it, vi } from 'vitest';
import { Redis } from 'ioredis';
import { useHopper } from '../helpers/hopper.js';
import { migrateFromBullMQ, MigrationError, type MigrationProgress } from '../../src/migrate/index.js';
import { bullKeys } from '../../src/migrate/bullmq-keys.js';
import { loadBull, useBullPrefixes } from './bullmq-deployment.js';
import { Migrator } from './live-migrator.js';

const env = useHopper();
const newBullPrefix = useBullPrefixes(env);

const WAIT = { timeout: 20_000, interval: 50 };

describe.each([6, 5] as const)('deduplication from BullMQ %i', (version) => {
  it('carries a ttl key whose job finished in BullMQ: a Hopper add with its id is deduplicated until the ttl ends', async () => {
    const bull = await loadBull(version);
    const bp = newBullPrefix();
    const name = env.queueName('dedup');
    const r = new Redis(env.url, { maxRetriesPerRequest: null });
    const bq = new bull.Queue(name, { connection: r, prefix: bp });
    try {
      // Finished in BullMQ, its key still running there.
      const done = await bq.add('d', { n: 1 }, { deduplication: { id: 'k-done', ttl: 600_000 } });
      const w = new bull.Worker(name, null, { connection: r, prefix: bp, autorun: false });
      const job = await w.getNextJob('tok');
      expect(job?.id).toBe(done.id);
      await job!.moveToCompleted('ok', 'tok', false);
      await w.close();
      // A short ttl: carried with the ms it has left, then gone in Hopper too.
      const short = await bq.add('d', { n: 2 }, { deduplication: { id: 'k-short', ttl: 600_000 } });
      await r.pexpire(`${bp}:${name}:de:k-short`, 1500);
      const w2 = new bull.Worker(name, null, { connection: r, prefix: bp, autorun: false });
      await (await w2.getNextJob('tok2'))!.moveToCompleted('ok', 'tok2', false);
      await w2.close();
      expect(await bq.getJobCounts('completed')).toEqual({ completed: 2 });

      const report = await migrateFromBullMQ({ from: env.url, queue: name, prefix: bp, hopperPrefix: env.prefix });
      expect(report.lost).toBe(0);
      expect(report.deduplication?.carried).toBe(2);
      const queue = env.queue(name);
      expect(await queue.getDeduplicationJobId('k-done')).toBe(done.id);
      expect(await queue.getDeduplicationJobId('k-short')).toBe(short.id);

      // BullMQ would deduplicate this add onto the finished job: so does Hopper (no job is made).
      const events = env.events(name);
      await events.waitUntilReady();
      const seen = new Promise<{ jobId: string; deduplicationId: string }>((resolve) => {
        events.once('deduplicated', (e: { jobId: string; deduplicationId: string }) => resolve(e));
      });
      const again = await queue.add('d', { n: 3 }, { deduplication: { id: 'k-done', ttl: 600_000 } });
      expect(again.id).toBe(done.id);
      expect(await seen).toMatchObject({ jobId: done.id, deduplicationId: 'k-done' });
      expect(await queue.count()).toBe(0);
      expect(await queue.getJob(done.id!)).toBeUndefined();

      // A run again writes nothing more (the ids are there, with the same job).
      const rerun = await migrateFromBullMQ({ from: env.url, queue: name, prefix: bp, hopperPrefix: env.prefix });
      expect(rerun.deduplication?.carried).toBe(0);

      // The short ttl ends in Hopper as it does in BullMQ: then an add makes a job.
      await vi.waitFor(async () => expect(await queue.getDeduplicationJobId('k-short')).toBeUndefined(), WAIT);
      const fresh = await queue.add('d', { n: 4 }, { deduplication: { id: 'k-short', ttl: 600_000 } });
      expect(fresh.id).not.toBe(short.id);
      expect(await queue.count()).toBe(1);
    } finally {
      await bq.close();
      r.disconnect();
    }
  });

  it('while the bridge runs, BullMQ adds with a moved job’s id (no ttl) are deduplicated until it finishes in Hopper', async () => {
    const bull = await loadBull(version);
    const bp = newBullPrefix();
    const name = env.queueName('lease');
    const r = new Redis(env.url, { maxRetriesPerRequest: null });
    const bq = new bull.Queue(name, { connection: r, prefix: bp });
    const controller = new AbortController();
    try {
      // Held until the job finishes (no ttl): one that will run, one delayed for an hour.
      const runs = await bq.add('d', { n: 1 }, { deduplication: { id: 'k-run' } });
      const later = await bq.add('d', { n: 2 }, { deduplication: { id: 'k-later' }, delay: 3_600_000 });
      let moved = 0;
      const onProgress = (e: MigrationProgress) => {
        if (e.kind === 'moved') moved += e.count;
      };
      const bridge = migrateFromBullMQ({
        from: env.url,
        queue: name,
        prefix: bp,
        hopperPrefix: env.prefix,
        follow: true,
        signal: controller.signal,
        onProgress,
      });
      const queue = env.queue(name);
      await vi.waitFor(() => expect(moved).toBe(2), WAIT);
      const runsKey = `${bp}:${name}:de:k-run`;
      const laterKey = `${bp}:${name}:de:k-later`;
      // BullMQ's keys still name the moved jobs (leased: a ttl the bridge renews).
      expect(await r.get(runsKey)).toBe(runs.id);
      expect(await r.pttl(runsKey)).toBeGreaterThan(0);

      // A BullMQ producer's add with either id is deduplicated onto the moved job: no job made.
      const dupRun = await bq.add('d', { n: 3 }, { deduplication: { id: 'k-run' } });
      const dupLater = await bq.add('d', { n: 4 }, { deduplication: { id: 'k-later' } });
      expect(dupRun.id).toBe(runs.id);
      expect(dupLater.id).toBe(later.id);
      const counts = await bq.getJobCounts('waiting', 'delayed', 'prioritized', 'paused');
      expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(0);
      // So is a Hopper add (the moved job holds its id in Hopper).
      expect((await queue.add('d', { n: 5 }, { deduplication: { id: 'k-run' } })).id).toBe(runs.id);

      // The job runs in Hopper and finishes: BullMQ's key goes with it (the bridge sees it).
      const ran: string[] = [];
      env.worker(name, async (job) => {
        ran.push(job.id!);
      });
      await vi.waitFor(async () => expect(await r.exists(runsKey)).toBe(0), WAIT);
      expect(ran).toEqual([runs.id]);
      // Now a BullMQ add with that id makes a new job, which the bridge moves and Hopper runs.
      const next = await bq.add('d', { n: 6 }, { deduplication: { id: 'k-run' } });
      expect(next.id).not.toBe(runs.id);
      await vi.waitFor(() => expect(ran).toEqual([runs.id, next.id]), WAIT);
      // The delayed job still holds its id on both sides.
      expect(await r.get(laterKey)).toBe(later.id);

      controller.abort();
      const report = await bridge;
      expect(report.lost).toBe(0);
      expect(report.deduplication?.leasesEnded).toBeGreaterThanOrEqual(2);
      // The bridge ended: its leases end with it (BullMQ's keys of moved jobs go, as without it).
      expect(await r.exists(laterKey)).toBe(0);
      expect(await r.exists(`${bp}:${name}:hopper-migrate:dedup-leases`)).toBe(0);
      expect(await queue.getDeduplicationJobId('k-later')).toBe(later.id);
    } finally {
      controller.abort();
      await bq.close();
      r.disconnect();
    }
  });
});

describe('leases across a kill', () => {
  it('a SIGKILLed bridge leaves its leases running; the restarted one takes them over and ends them when the job finishes', async () => {
    const bull = await loadBull(6);
    const bp = newBullPrefix();
    const name = env.queueName('kill');
    const r = new Redis(env.url, { maxRetriesPerRequest: null });
    const bq = new bull.Queue(name, { connection: r, prefix: bp });
    const k = bullKeys(bp, name);
    const migrator = new Migrator([env.url, bp, env.prefix, name, '50', 'follow', '', '1000'], r, k.migrateLock);
    try {
      const job = await bq.add('d', { n: 1 }, { deduplication: { id: 'k' } });
      const first = await migrator.start();
      await first.when((p) => p.batches >= 1 && p.passes >= 1);
      await first.kill();
      // Killed: the lease still names the moved job, with a ttl of its own (it expires by itself).
      const dk = `${bp}:${name}:de:k`;
      expect(await r.get(dk)).toBe(job.id);
      const ttl = await r.pttl(dk);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(30_000);
      expect(await r.hget(k.dedupLeases, 'k')).toBe(job.id);
      expect((await bq.add('d', { n: 2 }, { deduplication: { id: 'k' } })).id).toBe(job.id);
      // Restarted (once the killed run's lock expired): it renews the lease, then ends it once the
      // job has run in Hopper; BullMQ's next add with the id makes a job, which it moves.
      const second = await migrator.start();
      const queue = env.queue(name);
      expect(await queue.getDeduplicationJobId('k')).toBe(job.id);
      const ran: string[] = [];
      env.worker(name, async (j) => {
        ran.push(j.id!);
      });
      await vi.waitFor(async () => expect(await r.exists(dk)).toBe(0), WAIT);
      expect(ran).toEqual([job.id]);
      const next = await bq.add('d', { n: 3 }, { deduplication: { id: 'k' } });
      expect(next.id).not.toBe(job.id);
      await vi.waitFor(() => expect(ran).toEqual([job.id, next.id]), WAIT);
      await second.stop();
      expect(second.report?.lost).toBe(0);
      expect(await r.exists(k.dedupLeases)).toBe(0);
    } finally {
      for (const run of migrator.runs) if (run.child.exitCode === null && run.child.signalCode === null) await run.kill();
      await bq.close();
      r.disconnect();
    }
  });
});

describe('deduplication target', () => {
  it('refuses a SQLite Hopper (no importDedupKeys: not a migration target), changing nothing in BullMQ', async () => {
    const bull = await loadBull(6);
    const bp = newBullPrefix();
    const name = env.queueName('sqlite');
    const r = new Redis(env.url, { maxRetriesPerRequest: null });
    const bq = new bull.Queue(name, { connection: r, prefix: bp });
    try {
      const job = await bq.add('d', { n: 1 }, { deduplication: { id: 'k', ttl: 600_000 } });
      const err = await migrateFromBullMQ({ from: env.url, to: 'sqlite::memory:', queue: name, prefix: bp }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MigrationError);
      expect((err as MigrationError).reason).toBe('unsupported-target');
      expect(await r.get(`${bp}:${name}:de:k`)).toBe(job.id);
      expect(await bq.getJobCounts('waiting')).toEqual({ waiting: 1 });
    } finally {
      await bq.close();
      r.disconnect();
    }
  });
});
