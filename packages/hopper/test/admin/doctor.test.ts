/**
 * `Admin.doctor`: each misconfiguration it checks, made on purpose, is found; a healthy
 * deployment gets no finding. Server checks run on dedicated redis-servers started with the
 * settings under test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Admin, Queue, Worker, type DoctorReport } from '../../src/index.js';
import { startRedisServer, type RedisServerHandle } from '../helpers/redis-server.js';
import { fillMemory, refuseOneConnection } from '../helpers/server-abuse.js';
import { collect } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';
import { until } from '../helpers/wait.js';

const env = useHopper();
const checks = (report: DoctorReport, queue?: string) =>
  report.findings.filter((f) => queue === undefined || f.queue === queue).map((f) => f.check);

describe('doctor: the server', () => {
  let healthy: RedisServerHandle;
  let careless: RedisServerHandle;
  let volatile: RedisServerHandle;
  beforeAll(async () => {
    [healthy, careless, volatile] = await Promise.all([
      // Its slow log keeps only calls over 1 s: on a loaded test machine a claim or the library's
      // load can take tens of ms, which is the machine's doing, not a finding about this deployment
      // (the slow-script check itself is tested on `careless`, which logs every call).
      startRedisServer([
        '--appendonly',
        'yes',
        '--appendfsync',
        'everysec',
        '--maxmemory-policy',
        'noeviction',
        '--slowlog-log-slower-than',
        '1000000',
      ]),
      startRedisServer(['--maxmemory-policy', 'allkeys-lru', '--maxmemory', '3mb', '--slowlog-log-slower-than', '0']),
      startRedisServer(['--maxmemory-policy', 'noeviction']), // no AOF, no RDB (the helper's defaults)
    ]);
  });
  afterAll(async () => {
    await Promise.all([healthy?.stop(), careless?.stop(), volatile?.stop()]);
  });

  it('a healthy deployment gets no finding', async () => {
    const connection = healthy.url;
    const queue = new Queue('orders', { connection });
    await queue.addBulk(
      Array.from({ length: 20 }, (_, i) => ({
        name: i % 2 ? 'charge' : 'receipt',
        data: { i },
        opts: { attempts: 5, backoff: { type: 'exponential' as const, delay: 1000 }, removeOnComplete: false },
      })),
    );
    const worker = new Worker('orders', async () => 'ok', { connection });
    await collect(worker, 'completed', 20);
    await queue.add('charge', { i: 99 }, { attempts: 5, backoff: { type: 'exponential', delay: 1000 }, delay: 60_000 });
    const admin = new Admin({ connection });
    try {
      const report = await admin.doctor();
      expect(report.findings).toEqual([]);
      expect(report.queues).toEqual(['orders']);
      expect(report.server).toMatchObject({ aof: true, maxmemoryPolicy: 'noeviction' });
    } finally {
      await admin.close();
      await worker.close();
      await queue.close();
    }
  });

  it('finds no persistence while queues hold work', async () => {
    const queue = new Queue('orders', { connection: volatile.url });
    await queue.add('charge', {}, { attempts: 3, backoff: { type: 'fixed', delay: 100 } });
    const admin = new Admin({ connection: volatile.url });
    try {
      const report = await admin.doctor();
      expect(report.findings.find((f) => f.check === 'redis-no-persistence')).toMatchObject({ severity: 'warning' });
    } finally {
      await admin.close();
      await queue.close();
    }
  });

  it('finds eviction, evicted keys, memory near the limit, slow scripts and refused connections', async () => {
    const connection = careless.url;
    // Fill memory past maxmemory so the LRU policy evicts keys (as it would evict jobs).
    await fillMemory(connection, 600, 10_000);
    const queue = new Queue('orders', { connection });
    await queue.add('charge', {}, { attempts: 3, backoff: { type: 'fixed', delay: 100 } });
    await refuseOneConnection(connection);
    const admin = new Admin({ connection });
    try {
      const report = await admin.doctor();
      expect(checks(report)).toEqual(
        expect.arrayContaining([
          'redis-eviction-policy',
          'redis-evicted-keys',
          'redis-memory-near-limit',
          'redis-slow-scripts',
          'redis-rejected-connections',
        ]),
      );
      const eviction = report.findings.find((f) => f.check === 'redis-eviction-policy');
      expect(eviction).toMatchObject({ severity: 'error' });
      expect(eviction?.fix).toContain('noeviction');
      // Errors come first.
      expect(report.findings[0].severity).toBe('error');
    } finally {
      await admin.close();
      await queue.close();
    }
  });
});

describe('doctor: the queues', () => {
  it('finds missing retries, retries without backoff, endless retries, no workers, a backlog and an old waiting job', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('plain', {});
    await queue.add('plain', {});
    await queue.add('hammer', {}, { attempts: 5 });
    await queue.add('forever', {}, { attempts: 1000, backoff: { type: 'fixed', delay: 10 } });
    await until(async () => Date.now() > (await queue.getJobs('waiting', 0, 0, true))[0].timestamp + 1, 'the oldest job to age');
    const admin = env.track(new Admin({ connection: env.url, prefix: env.prefix }));
    const report = await admin.doctor({ backlog: 2, oldestWaitingMs: 1 });
    expect(checks(report, name).sort()).toEqual(
      ['backlog', 'jobs-without-retries', 'no-workers', 'oldest-waiting', 'retries-without-backoff', 'unbounded-retries'].sort(),
    );
    expect(report.findings.find((f) => f.check === 'no-workers')).toMatchObject({ severity: 'error', queue: name });
  });

  it('finds dead letters, kept finished jobs, run times near the lock and slow jobs beside fast ones', async () => {
    const name = env.queueName();
    const dlq = env.queueName('dlq');
    const queue = env.queue(name);
    await env.queue(dlq).waitUntilReady();
    const opts = { attempts: 2, backoff: { type: 'fixed' as const, delay: 1 }, removeOnComplete: false };
    await queue.addBulk([
      ...Array.from({ length: 4 }, (_, i) => ({ name: 'slow', data: { i }, opts })),
      ...Array.from({ length: 4 }, (_, i) => ({ name: 'fast', data: { i }, opts })),
      { name: 'poison', data: {}, opts: { ...opts, deadLetter: { queue: dlq } } },
    ]);
    const worker = env.worker(name, async (job) => {
      if (job.name === 'poison') throw new Error('bad input');
      // The job's own work: slow jobs take a while, fast ones none.
      if (job.name === 'slow') await new Promise((r) => setTimeout(r, 200));
    });
    await Promise.all([collect(worker, 'completed', 8), collect(worker, 'failed', 2)]);
    const admin = env.track(new Admin({ connection: env.url, prefix: env.prefix }));
    const report = await admin.doctor({ lockDurationMs: 200, slowRunMs: 100, retainedFinished: 5 });
    expect(checks(report, name).sort()).toEqual(['mixed-durations', 'no-retention', 'run-time-near-lock'].sort());
    expect(checks(report, dlq)).toEqual(['dead-letters']);
    expect(report.findings.find((f) => f.check === 'mixed-durations')?.evidence).toContain('"slow"');
  });

  it('finds a late scheduler and a paused group holding jobs', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.upsertJobScheduler('tick', { every: 1000 }, { name: 'tick', opts: { attempts: 3, backoff: { type: 'fixed', delay: 10 } } });
    await queue.pauseGroup('tenant-a');
    await queue.add('mail', {}, { group: { id: 'tenant-a' }, attempts: 3, backoff: { type: 'fixed', delay: 10 } });
    await until(async () => Date.now() > ((await queue.getJobSchedulerState('tick'))?.next ?? Infinity) + 1, 'the scheduler to be overdue');
    const admin = env.track(new Admin({ connection: env.url, prefix: env.prefix }));
    const report = await admin.doctor({ schedulerLateMs: 0 });
    expect(checks(report, name)).toEqual(expect.arrayContaining(['scheduler-late', 'group-paused-backlog']));
  });
});
