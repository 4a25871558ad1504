/**
 * hopper-queue-metrics against a real Redis: the collector in a user's registry, the exporter, and the
 * exactness of counters and histograms across two worker processes.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from 'hopper-queue';
import { useHopper } from '../../hopper/test/helpers/hopper.js';
import { collect } from '../../hopper/test/helpers/wait.js';
import { HopperMetrics, parseRedisInfo, startMetricsServer } from '../src/index.js';
import { parseText, sum } from './prom-text.js';

const env = useHopper();
const WORKER = fileURLToPath(new URL('./fixtures/worker-process.mjs', import.meta.url));

function startWorkerProcess(queue: string): ChildProcess {
  return fork(WORKER, [], { env: { ...process.env, REDIS_URL: env.url, PREFIX: env.prefix, QUEUE: queue }, stdio: 'inherit' });
}

function message(child: ChildProcess, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    child.on('message', (m) => m === text && resolve());
    child.once('exit', (code) => reject(new Error(`worker process exited (${code}) before "${text}"`)));
  });
}

describe('hopper-queue-metrics', () => {
  it("registers collect-on-scrape metrics in the user's own registry, with exact counters, gauges and histograms", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const registry = new Registry();
    const mine = new (await import('prom-client')).Counter({ name: 'app_requests_total', help: 'the app', registers: [registry] });
    mine.inc();
    const metrics = new HopperMetrics({ connection: env.url, prefix: env.prefix, registry, queues: [name] });
    try {
      await queue.addBulk([
        { name: 'ok', data: {} },
        { name: 'ok', data: {} },
        { name: 'bad', data: {}, opts: { attempts: 2 } },
      ]);
      await queue.add('later', {}, { delay: 3_600_000 });
      const worker = env.worker(name, async (job) => {
        if (job.name === 'bad') throw new Error('no');
      });
      await collect(worker, 'completed', 2);
      await collect(worker, 'failed', 2);
      await worker.close();
      const text = await registry.metrics();
      expect(text).toContain('app_requests_total 1');
      const samples = parseText(text);
      expect(sum(samples, 'hopper_jobs_completed_total', { queue: name, name: 'ok' })).toBe(2);
      expect(sum(samples, 'hopper_jobs_retried_total', { queue: name, name: 'bad' })).toBe(1);
      expect(sum(samples, 'hopper_jobs_failed_total', { queue: name, name: 'bad' })).toBe(1);
      // A name whose jobs have no outcome yet already has its series, at 0 (admitted at add).
      const later = samples.filter((s) => s.name === 'hopper_jobs_failed_total' && s.labels.queue === name && s.labels.name === 'later');
      expect(later.map((s) => s.value)).toEqual([0]);
      expect(sum(samples, 'hopper_queue_jobs', { queue: name, state: 'delayed' })).toBe(1);
      expect(sum(samples, 'hopper_queue_jobs', { queue: name, state: 'failed' })).toBe(1);
      expect(sum(samples, 'hopper_job_run_seconds_count', { queue: name })).toBe(4);
      expect(sum(samples, 'hopper_job_run_seconds_bucket', { queue: name, name: 'ok', le: '+Inf' })).toBe(2);
      expect(sum(samples, 'hopper_job_wait_seconds_count', { queue: name })).toBe(3);
      expect(sum(samples, 'hopper_redis_used_memory_bytes', {})).toBeGreaterThan(0);
      expect(text).toMatch(/# TYPE hopper_job_wait_seconds histogram/);
      expect(text).toMatch(/# TYPE hopper_jobs_completed_total counter/);
    } finally {
      await metrics.close();
    }
  });

  it('counts exactly across two worker processes: counters and histogram counts equal the jobs processed', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const events = env.events(name);
    await events.waitUntilReady();
    const children = [startWorkerProcess(name), startWorkerProcess(name)];
    try {
      await Promise.all(children.map((c) => message(c, 'ready')));
      const N = 600;
      const finished = collect(events, 'completed', N - 50);
      const failed = collect(events, 'failed', 50);
      for (let i = 0; i < N; i += 100) {
        await queue.addBulk(Array.from({ length: 100 }, (_, j) => ({ name: (i + j) % 12 === 0 ? 'bad' : 'good', data: { n: i + j } })));
      }
      await finished;
      await failed;
      await Promise.all(
        children.map(async (c) => {
          const closed = message(c, 'closed');
          c.send('close');
          await closed;
        }),
      );
      await Promise.all(
        children.map((c) => new Promise((resolve) => (c.exitCode !== null ? resolve(c.exitCode) : c.once('exit', resolve)))),
      );
      expect(children.map((c) => c.exitCode)).toEqual([0, 0]);
      const metrics = new HopperMetrics({ connection: env.url, prefix: env.prefix, queues: [name] });
      try {
        const samples = parseText(await metrics.metrics());
        expect(sum(samples, 'hopper_jobs_completed_total', { queue: name, name: 'good' })).toBe(N - 50);
        expect(sum(samples, 'hopper_jobs_failed_total', { queue: name, name: 'bad' })).toBe(50);
        expect(sum(samples, 'hopper_job_run_seconds_count', { queue: name })).toBe(N);
        expect(sum(samples, 'hopper_job_wait_seconds_count', { queue: name })).toBe(N);
        expect(sum(samples, 'hopper_job_run_seconds_bucket', { queue: name, le: '+Inf' })).toBe(N);
      } finally {
        await metrics.close();
      }
    } finally {
      for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    }
  });

  it('serves /metrics on loopback (404 elsewhere) and reads Redis INFO fields', async () => {
    const name = env.queueName();
    await env.queue(name).add('x', {});
    const server = await startMetricsServer({ port: 0, connection: env.url, prefix: env.prefix });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      const res = await fetch(server.url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/text\/plain/);
      const samples = parseText(await res.text());
      expect(sum(samples, 'hopper_queue_jobs', { queue: name, state: 'waiting' })).toBe(1);
      expect((await fetch(server.url.replace('/metrics', '/other'))).status).toBe(404);
    } finally {
      await server.close();
    }
    expect(parseRedisInfo('# Memory\r\nused_memory:1024\r\nmem_fragmentation_ratio:1.5\r\nevicted_keys:3\r\n')).toMatchObject({
      usedMemory: 1024,
      fragmentationRatio: 1.5,
      evictedKeys: 3,
    });
  });

  it('exports group labels only when asked, for the top N groups by backlog', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.addBulk([
      ...Array.from({ length: 3 }, () => ({ name: 'x', data: {}, opts: { group: { id: 'big' } } })),
      { name: 'x', data: {}, opts: { group: { id: 'small' } } },
    ]);
    const plain = new HopperMetrics({ connection: env.url, prefix: env.prefix, queues: [name] });
    const grouped = new HopperMetrics({ connection: env.url, prefix: env.prefix, queues: [name], groups: { top: 1 } });
    try {
      expect(parseText(await plain.metrics()).filter((s) => s.name === 'hopper_group_jobs')).toEqual([]);
      const samples = parseText(await grouped.metrics()).filter((s) => s.name === 'hopper_group_jobs');
      expect(samples.map((s) => s.labels.group)).toEqual(['big', 'big', 'big']);
      expect(sum(samples, 'hopper_group_jobs', { queue: name, group: 'big', state: 'waiting' })).toBe(3);
    } finally {
      await plain.close();
      await grouped.close();
    }
  });

  it('refuses bad options with a typed error', () => {
    expect(() => new HopperMetrics({ metricPrefix: 'bad prefix' })).toThrow(/metricPrefix/);
    expect(() => new HopperMetrics({ groups: { top: -1 } })).toThrow(/groups.top/);
  });

  it('refuses unknown options, bad bounds and a second collector on one registry, opening nothing (issue 34)', async () => {
    expect(() => new HopperMetrics({ cachMs: 5 } as object)).toThrow(InvalidOptionsError);
    expect(() => new HopperMetrics({ cachMs: 5 } as object)).toThrow("did you mean 'cacheMs'");
    expect(() => new HopperMetrics({ cacheMs: Infinity })).toThrow(/cacheMs/);
    expect(() => new HopperMetrics({ connection: 42 } as object)).toThrow(InvalidOptionsError);
    await expect(startMetricsServer({ port: 70000, connection: env.url })).rejects.toThrow(/port/);
    await expect(startMetricsServer({ port: 0, path: 'metrics', connection: env.url })).rejects.toThrow(/path/);
    const registry = new Registry();
    const first = new HopperMetrics({ connection: env.url, prefix: env.prefix, registry });
    try {
      const second = (): HopperMetrics => new HopperMetrics({ connection: env.url, prefix: env.prefix, registry });
      expect(second).toThrow(InvalidOptionsError);
      expect(second).toThrow(/already has a metric named hopper_/);
      // Another metricPrefix on the same registry is fine.
      await new HopperMetrics({ connection: env.url, prefix: env.prefix, registry, metricPrefix: 'other_' }).close();
    } finally {
      await first.close();
    }
  });
});
