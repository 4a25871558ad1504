/**
 * `hopper migrate` as an operator runs it: the real binary against a queue built by the real
 * bullmq package. The dry run changes nothing and says what would move; the run moves it and ends
 * with `migrated <n> jobs (<per state>), <s> schedulers; lost 0`; exit codes.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { Queue as BullQueue } from 'bullmq';
import { Redis } from 'ioredis';
import { Queue } from 'hopper-queue';
import { useHopper } from '../../hopper/test/helpers/hopper.js';
import type { CliResult } from './run-cli.js';

const env = useHopper();
const BIN = fileURLToPath(new URL('../bin/hopper.js', import.meta.url));
const bullPrefixes: string[] = [];

function migrate(...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, 'migrate', ...args], (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

afterEach(async () => {
  const r = new Redis(env.url);
  for (const p of bullPrefixes.splice(0)) {
    const keys = await r.keys(`${p}:*`);
    if (keys.length > 0) await r.del(...keys);
  }
  r.disconnect();
});

describe('hopper migrate', () => {
  it('dry run, then the move; the last line counts per state; a due scheduler run is not doubled; exit 0', async () => {
    const bp = `b${randomBytes(4).toString('hex')}`;
    bullPrefixes.push(bp);
    const name = env.queueName('cli');
    const conn = new Redis(env.url, { maxRetriesPerRequest: null });
    const bq = new BullQueue(name, { connection: conn, prefix: bp });
    await bq.addBulk(Array.from({ length: 5 }, (_, i) => ({ name: 'w', data: { i }, opts: { jobId: `w${i}` } })));
    await bq.add('d', { x: 1 }, { jobId: 'd1', delay: 3_600_000 });
    await bq.add('p', { x: 1 }, { jobId: 'p1', priority: 2 });
    await bq.add('bad', { x: 1 }, { jobId: 'bad1', priority: 3_000_000 }).catch(() => undefined);
    await bq.upsertJobScheduler('tick', { every: 60_000 }, { name: 'tick', data: { t: 1 } });
    await bq.close();
    conn.disconnect();
    const common = ['--from', env.url, '--queue', name, '--prefix', bp, '--hopper-prefix', env.prefix];

    const dry = await migrate(...common, '--dry-run');
    expect(dry.stderr).toMatch(/^BullMQ layout 6 \(meta version bullmq:6\.7\.0\)/);
    expect(dry.code).toBe(0);
    expect(dry.stdout.trim().split('\n').at(-1)).toBe('would migrate 8 jobs (6 waiting, 1 prioritized, 1 delayed), 1 schedulers; lost 0');
    const queue = new Queue(name, { connection: env.url, prefix: env.prefix });
    try {
      expect(await queue.count()).toBe(0);
      const run = await migrate(...common);
      expect(run.code).toBe(0);
      expect(run.stdout.trim().split('\n').at(-1)).toBe('migrated 8 jobs (6 waiting, 1 prioritized, 1 delayed), 1 schedulers; lost 0');
      expect(run.stdout).toMatch(/counts read back match/);
      // The every-scheduler's first occurrence was already due in BullMQ (waiting): it moves as a
      // job, and the Hopper scheduler's next one is the occurrence after it, never the same one.
      const waiting = (await queue.getWaiting(0, -1)).map((j) => j.id!);
      expect(waiting.slice(0, 5)).toEqual(['w0', 'w1', 'w2', 'w3', 'w4']);
      const occurrence = waiting[5];
      expect(occurrence).toMatch(/^repeat:tick:\d+$/);
      const sched = await queue.getJobScheduler('tick');
      expect(sched?.every).toBe(60_000);
      expect(sched?.next).toBe(Number(occurrence.split(':')[2]) + 60_000);
    } finally {
      await queue.close();
    }
  });

  it('--to-bullmq: Hopper-only state refused (exit 1) unless dropped; then the jobs are back in BullMQ, exit 0', async () => {
    const bp = `b${randomBytes(4).toString('hex')}`;
    bullPrefixes.push(bp);
    const name = env.queueName('back');
    const queue = new Queue(name, { connection: env.url, prefix: env.prefix });
    try {
      await queue.addBulk(Array.from({ length: 3 }, (_, i) => ({ name: 'w', data: { i }, opts: { jobId: `w${i}` } })));
      await queue.add('d', { x: 1 }, { jobId: 'd1', delay: 3_600_000 });
      await queue.add('g', { x: 1 }, { jobId: 'g1', group: { id: 'tenant-a' } });
    } finally {
      await queue.close();
    }
    const common = ['--from', env.url, '--queue', name, '--prefix', bp, '--hopper-prefix', env.prefix, '--to-bullmq'];

    const refused = await migrate(...common);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/group/i);
    const conn = new Redis(env.url, { maxRetriesPerRequest: null });
    const bq = new BullQueue(name, { connection: conn, prefix: bp });
    try {
      expect((await bq.getJobCounts('waiting', 'delayed')).waiting).toBe(0);
      const run = await migrate(...common, '--drop-hopper-only');
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout.trim().split('\n').at(-1)).toBe('migrated 5 jobs (4 waiting, 1 delayed), 0 schedulers; lost 0');
      expect(await bq.getJobCounts('waiting', 'delayed')).toEqual({ waiting: 4, delayed: 1 });
      expect((await bq.getWaiting(0, -1)).map((j) => j.id).sort()).toEqual(['g1', 'w0', 'w1', 'w2']);
    } finally {
      await bq.close();
      conn.disconnect();
    }
  });

  it('usage errors exit 2; an unknown queue exits 1 and says why', async () => {
    const missing = await migrate('--queue', 'q');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--from <redis-url> is required/);
    const quiet = await migrate('--from', env.url, '--queue', 'q', '--quiet-for', '5');
    expect(quiet.code).toBe(2);
    expect(quiet.stderr).toMatch(/--quiet-for goes with --follow/);
    const none = await migrate('--from', env.url, '--queue', `none${randomBytes(3).toString('hex')}`, '--prefix', 'nobody');
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/does not exist/);
  });
});
