/**
 * hopper-queue-metrics against a SQLite queue (`sqlite::memory:`): the same exact counters, gauges and
 * histograms as on Redis; the Redis server families are left out (a SQLite database has no INFO).
 */
import { randomUUID } from 'node:crypto';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Queue, Worker } from 'hopper-queue';
import { collect } from '../../hopper/test/helpers/wait.js';
import { HopperMetrics } from '../src/index.js';
import { parseText, sum } from './prom-text.js';

describe('hopper-queue-metrics on SQLite', () => {
  it('exports exact counters, job counts and histograms of a sqlite::memory: queue', async () => {
    const connection = 'sqlite::memory:';
    const prefix = `m-${randomUUID().slice(0, 8)}`;
    const name = 'jobs';
    const queue = new Queue(name, { connection, prefix });
    const registry = new Registry();
    const metrics = new HopperMetrics({ connection, prefix, registry, queues: [name] });
    // Listening before the adds: the worker may finish jobs before addBulk returns.
    const worker = new Worker(
      name,
      async (job) => {
        if (job.name === 'bad') throw new Error('no');
      },
      { connection, prefix, autorun: false },
    );
    const completed = collect(worker, 'completed', 2);
    const failed = collect(worker, 'failed', 2);
    try {
      await queue.addBulk([
        { name: 'ok', data: {} },
        { name: 'ok', data: {} },
        { name: 'bad', data: {}, opts: { attempts: 2 } },
      ]);
      await queue.add('later', {}, { delay: 3_600_000 });
      void worker.run();
      await completed;
      await failed;
      await worker.close(); // writes the worker's histogram counts
      const text = await registry.metrics();
      const samples = parseText(text);
      expect(sum(samples, 'hopper_jobs_completed_total', { queue: name, name: 'ok' })).toBe(2);
      expect(sum(samples, 'hopper_jobs_retried_total', { queue: name, name: 'bad' })).toBe(1);
      expect(sum(samples, 'hopper_jobs_failed_total', { queue: name, name: 'bad' })).toBe(1);
      // Admitted at add: its series is there at 0 before any outcome.
      const later = samples.filter((s) => s.name === 'hopper_jobs_failed_total' && s.labels.queue === name && s.labels.name === 'later');
      expect(later.map((s) => s.value)).toEqual([0]);
      expect(sum(samples, 'hopper_queue_jobs', { queue: name, state: 'delayed' })).toBe(1);
      expect(sum(samples, 'hopper_queue_jobs', { queue: name, state: 'failed' })).toBe(1);
      expect(sum(samples, 'hopper_job_run_seconds_count', { queue: name })).toBe(4);
      expect(sum(samples, 'hopper_job_wait_seconds_count', { queue: name })).toBe(3);
      expect(samples.some((s) => s.name.startsWith('hopper_redis_'))).toBe(false);
    } finally {
      await worker.close();
      await metrics.close();
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });
});
