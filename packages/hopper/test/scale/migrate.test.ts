/**
 * hopper migrate at full size (npm run test:scale): a BullMQ 6 deployment of 10,000 waiting,
 * 2,000 delayed over the next days, 500 prioritized, 200 failed, 50 flows (a parent waiting for a
 * completed and a waiting child), 3 job schedulers; the migrating process SIGKILLed twice and run
 * again; then Hopper workers run every ready job exactly once. Prints the figures.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { useHopper } from '../helpers/hopper.js';
import type { MigrationReport } from '../../src/migrate/index.js';
import { bullKeys } from '../../src/migrate/bullmq-keys.js';
import { bullPrefix, deleteKeys, loadBull } from '../migrate/bullmq-deployment.js';

const env = useHopper();
const prefixes: string[] = [];
afterEach(async () => {
  for (const p of prefixes.splice(0)) await deleteKeys(env.url, `${p}:*`);
});
const MIGRATOR = fileURLToPath(new URL('../fixtures/migrator.mjs', import.meta.url));

function run(args: string[], kill: boolean): Promise<MigrationReport | undefined> {
  return new Promise((resolve, reject) => {
    const child = fork(MIGRATOR, args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    let report: MigrationReport | undefined;
    let batches = 0;
    child.on('message', (m: { moved?: number; report?: MigrationReport }) => {
      if (m.moved !== undefined && kill && ++batches === 20) child.kill('SIGKILL');
      if (m.report) report = m.report;
    });
    child.on('error', reject);
    child.on('exit', () => resolve(report));
  });
}

describe('migrate at full size', () => {
  it('moves 12,700 jobs, 50 flows and 3 schedulers through two SIGKILLs: none lost, none doubled', async () => {
    const bull = await loadBull(6);
    const bp = bullPrefix();
    prefixes.push(bp);
    const name = env.queueName('big');
    const conn = new Redis(env.url, { maxRetriesPerRequest: null });
    const q = new bull.Queue(name, { connection: conn, prefix: bp });
    const fp = new bull.FlowProducer({ connection: conn, prefix: bp });
    for (let i = 0; i < 200; i++) await q.add('f', { i }, { jobId: `f${i}` });
    const w = new bull.Worker(name, null, { connection: conn, prefix: bp, autorun: false });
    for (let i = 0; i < 200; i++) {
      const job = await w.getNextJob(`t${i}`);
      await job!.moveToFailed(new Error('boom'), `t${i}`, false);
    }
    for (let i = 0; i < 50; i++) {
      await fp.add({
        name: 'parent',
        queueName: name,
        data: {},
        opts: { jobId: `P${i}` },
        children: [
          { name: 'child', queueName: name, data: {}, opts: { jobId: `C${i}a` } },
          { name: 'child', queueName: name, data: {}, opts: { jobId: `C${i}b` } },
        ],
      });
    }
    for (let i = 0; i < 50; i++) {
      const job = await w.getNextJob(`c${i}`);
      await job!.moveToCompleted({ v: job!.id }, `c${i}`, false);
    }
    await w.close();
    for (let from = 0; from < 10_000; from += 1000) {
      await q.addBulk(Array.from({ length: 1000 }, (_, j) => ({ name: 'w', data: { i: from + j }, opts: { jobId: `w${from + j}` } })));
    }
    const now = Date.now();
    await q.addBulk(
      Array.from({ length: 2000 }, (_, i) => ({ name: 'd', data: { i }, opts: { jobId: `d${i}`, delay: 3_600_000 + i * 250_000 } })),
    );
    await q.addBulk(Array.from({ length: 500 }, (_, i) => ({ name: 'p', data: { i }, opts: { jobId: `p${i}`, priority: 1 + (i % 10) } })));
    await q.upsertJobScheduler('hourly', { pattern: '0 * * * *', tz: 'America/New_York' }, { name: 'hourly', data: {} });
    await q.upsertJobScheduler('daily', { pattern: '30 2 * * *', tz: 'Europe/Paris' }, { name: 'daily', data: {} });
    await q.upsertJobScheduler('every10m', { every: 600_000 }, { name: 'ev', data: {} });
    const before = await q.getJobCounts('waiting', 'prioritized', 'delayed', 'waiting-children', 'failed');
    await q.close();
    await fp.close();
    const args = [env.url, bp, env.prefix, name, '200'];
    const started = Date.now();
    for (let kill = 0; kill < 2; kill++) {
      await run(args, true);
      await conn.del(bullKeys(bp, name).migrateLock);
    }
    const report = (await run(args, false))!;
    const seconds = (Date.now() - started) / 1000;
    conn.disconnect();
    const queue = env.queue(name);
    const counts = await queue.getJobCounts('waiting', 'prioritized', 'delayed', 'waiting-children', 'failed');
    console.log(
      `migrate full size: ${seconds.toFixed(1)} s for three runs (two killed); last run: ${JSON.stringify(report.moved)}, already in Hopper ${report.alreadyThere}, schedulers ${report.schedulers}, lost ${report.lost}; Hopper counts ${JSON.stringify(counts)}`,
    );
    expect(report.lost).toBe(0);
    expect(report.countsMatch).toBe(true);
    // Every job BullMQ held is in Hopper in the same state; the every-scheduler's run was due in
    // BullMQ (moved as a waiting job) and Hopper planned the one after it (one more delayed).
    expect(counts).toEqual({ ...before, delayed: before.delayed + 1 });
    const ready = before.waiting + before.prioritized;
    const runs = new Map<string, number>();
    await new Promise<void>((resolve) => {
      env.worker(
        name,
        async (job) => {
          runs.set(job.id!, (runs.get(job.id!) ?? 0) + 1);
          if (runs.size >= ready + before['waiting-children']) resolve();
        },
        { concurrency: 50 },
      );
    });
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    console.log(
      `Hopper ran ${runs.size} jobs once each (parents included); ${((Date.now() - now) / 1000).toFixed(1)} s since the deployment`,
    );
  });
});
