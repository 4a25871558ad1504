/**
 * hopper migrate killed (SIGKILL) mid-run, twice, then run again: no job lost, none doubled.
 * The migrating process is a real child process (test/fixtures/migrator.mjs, on the built package).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { useHopper } from '../helpers/hopper.js';
import type { MigrationReport } from '../../src/migrate/index.js';
import { bullKeys } from '../../src/migrate/bullmq-keys.js';
import { loadBull, useBullPrefixes } from './bullmq-deployment.js';

const env = useHopper();
const newBullPrefix = useBullPrefixes(env);

const MIGRATOR = fileURLToPath(new URL('../fixtures/migrator.mjs', import.meta.url));

/** Runs the migrator; with `killAfterBatch`, SIGKILLs it when it reports its first batch moved. */
function runMigrator(args: string[], killAfterBatch: boolean): Promise<{ report?: MigrationReport; killed: boolean; error?: string }> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = fork(MIGRATOR, args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    let report: MigrationReport | undefined;
    let error: string | undefined;
    let killed = false;
    child.on('message', (m: { moved?: number; report?: MigrationReport; error?: string }) => {
      if (m.moved !== undefined && killAfterBatch && !killed) {
        killed = child.kill('SIGKILL');
      }
      if (m.report) report = m.report;
      if (m.error) error = m.error;
    });
    child.on('error', reject);
    child.on('exit', () => resolve({ report, killed, error }));
  });
}

describe('crash and re-run', () => {
  it.each([6, 5] as const)('BullMQ %i: two SIGKILLs mid-run, then a re-run: every job in Hopper once, BullMQ empty', async (version) => {
    const bull = await loadBull(version);
    const bp = newBullPrefix();
    const name = env.queueName('crash');
    const conn = new Redis(env.url, { maxRetriesPerRequest: null });
    const q = new bull.Queue(name, { connection: conn, prefix: bp });
    const ids: string[] = [];
    const adds = [];
    for (let i = 0; i < 600; i++) adds.push({ name: 'w', data: { i }, opts: { jobId: `w${i}` } });
    for (let i = 0; i < 150; i++) adds.push({ name: 'p', data: { i }, opts: { jobId: `p${i}`, priority: 1 + (i % 4) } });
    for (let i = 0; i < 150; i++) adds.push({ name: 'd', data: { i }, opts: { jobId: `d${i}`, delay: 86_400_000 + i } });
    await q.addBulk(adds);
    ids.push(...adds.map((a) => a.opts.jobId));
    await q.close();
    const args = [env.url, bp, env.prefix, name, '40'];
    const k = bullKeys(bp, name);
    for (let kill = 0; kill < 2; kill++) {
      const run = await runMigrator(args, true);
      expect(run.killed).toBe(true);
      // The killed process's lock would expire by itself; the test does not wait for it.
      await conn.del(k.migrateLock);
    }
    const last = await runMigrator(args, false);
    conn.disconnect();
    expect(last.error).toBeUndefined();
    const report = last.report!;
    expect(report.lost).toBe(0);
    expect(report.countsMatch).toBe(true);
    // What the killed runs moved is not in this run's counts; the counts read back are whole.
    expect(report.counts.sourceAfter).toMatchObject({ waiting: 0, prioritized: 0, delayed: 0 });
    const queue = env.queue(name);
    const counts = await queue.getJobCounts('waiting', 'prioritized', 'delayed');
    expect(counts).toEqual({ waiting: 600, prioritized: 150, delayed: 150 });
    const inHopper = [...(await queue.getWaiting(0, -1)), ...(await queue.getPrioritized(0, -1)), ...(await queue.getDelayed(0, -1))].map(
      (j) => j.id!,
    );
    expect(inHopper.length).toBe(ids.length);
    expect(new Set(inHopper)).toEqual(new Set(ids));
    // Waiting order survives the crashes.
    expect((await queue.getWaiting(0, -1)).map((j) => j.id)).toEqual(ids.slice(0, 600));
  });
});
