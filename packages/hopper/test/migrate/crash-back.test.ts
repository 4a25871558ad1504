/**
 * hopper migrate --to-bullmq killed (SIGKILL) mid-run, twice, then run again: no job lost, none
 * doubled, waiting order kept. The migrating process is a real child process
 * (test/fixtures/migrator.mjs, on the built package). And a second migrate of a queue whose
 * lock is held is refused, changing nothing.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { useHopper } from '../helpers/hopper.js';
import { migrateToBullMQ, MigrationError, type MigrationReport } from '../../src/migrate/index.js';
import { bullKeys } from '../../src/migrate/bullmq-keys.js';
import { InvalidOptionsError } from '../../src/job/errors.js';
import { useBullPrefixes } from './bullmq-deployment.js';

const env = useHopper();
const newBullPrefix = useBullPrefixes(env);

const MIGRATOR = fileURLToPath(new URL('../fixtures/migrator.mjs', import.meta.url));

/** Runs the migrator back; with `killAfterBatch`, SIGKILLs it when it reports its first batch moved. */
function runMigrator(args: string[], killAfterBatch: boolean): Promise<{ report?: MigrationReport; killed: boolean; error?: string }> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = fork(MIGRATOR, args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    let report: MigrationReport | undefined;
    let error: string | undefined;
    let killed = false;
    child.on('message', (m: { moved?: number; report?: MigrationReport; error?: string }) => {
      if (m.moved !== undefined && killAfterBatch && !killed) killed = child.kill('SIGKILL');
      if (m.report) report = m.report;
      if (m.error) error = m.error;
    });
    child.on('error', reject);
    child.on('exit', () => resolve({ report, killed, error }));
  });
}

describe('the way back: crash and re-run', () => {
  it('two SIGKILLs mid-run, then a re-run: every job in BullMQ once, Hopper empty, order kept', async () => {
    const bp = newBullPrefix();
    const name = env.queueName('crashback');
    const queue = env.queue(name);
    const waiting = Array.from({ length: 600 }, (_, i) => `w${i}`);
    await queue.addBulk(waiting.map((id, i) => ({ name: 'w', data: { i }, opts: { jobId: id } })));
    const others: string[] = [];
    const adds = [];
    for (let i = 0; i < 150; i++) adds.push({ name: 'p', data: { i }, opts: { jobId: `p${i}`, priority: 1 + (i % 4) } });
    for (let i = 0; i < 150; i++) adds.push({ name: 'd', data: { i }, opts: { jobId: `d${i}`, delay: 86_400_000 + i } });
    await queue.addBulk(adds);
    others.push(...adds.map((a) => a.opts.jobId));
    const args = [env.url, bp, env.prefix, name, '40', 'back'];
    const conn = new Redis(env.url);
    const k = bullKeys(bp, name);
    try {
      for (let kill = 0; kill < 2; kill++) {
        const run = await runMigrator(args, true);
        expect(run.killed).toBe(true);
        // The killed process's lock would expire by itself; the test does not wait for it.
        await conn.del(k.migrateLock);
      }
      const last = await runMigrator(args, false);
      expect(last.error).toBeUndefined();
      const report = last.report!;
      expect(report.lost).toBe(0);
      expect(report.countsMatch).toBe(true);
      expect(report.counts.sourceAfter).toMatchObject({ waiting: 0, prioritized: 0, delayed: 0 });
      expect(await queue.getJobCounts('waiting', 'prioritized', 'delayed')).toEqual({ waiting: 0, prioritized: 0, delayed: 0 });
      // BullMQ holds each job once: the waiting list in run order (its tail first), the sets.
      const wait = (await conn.lrange(k.wait, 0, -1)).reverse();
      expect(wait).toEqual(waiting);
      const inSets = [...(await conn.zrange(k.prioritized, 0, -1)), ...(await conn.zrange(k.delayed, 0, -1))];
      expect(inSets.length).toBe(others.length);
      expect(new Set(inSets)).toEqual(new Set(others));
      for (const id of [...waiting.slice(0, 3), ...others.slice(0, 3)]) expect(await conn.exists(k.job(id))).toBe(1);
    } finally {
      conn.disconnect();
    }
  });

  it('a second migrate of a queue whose lock is held is refused, changing nothing', async () => {
    const bp = newBullPrefix();
    const name = env.queueName('locked');
    const queue = env.queue(name);
    await queue.add('a', {}, { jobId: 'a1' });
    const conn = new Redis(env.url);
    try {
      await conn.set(bullKeys(bp, name).migrateLock, 'another-run', 'PX', 10_000);
      const err = await migrateToBullMQ({ from: env.url, queue: name, prefix: bp, hopperPrefix: env.prefix }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MigrationError);
      expect((err as MigrationError).reason).toBe('locked');
      // Bad options are refused before any connection: the way back has no bridge, and a version is 5 or 6.
      for (const bad of [{ follow: true }, { bullmqVersion: '4' }]) {
        const refused = await migrateToBullMQ({ from: env.url, queue: name, prefix: bp, hopperPrefix: env.prefix, ...bad }).catch(
          (e: unknown) => e,
        );
        expect(refused).toBeInstanceOf(InvalidOptionsError);
      }
      expect(await queue.getJobState('a1')).toBe('waiting');
      expect(await conn.exists(bullKeys(bp, name).wait)).toBe(0);
    } finally {
      conn.disconnect();
    }
  });
});
