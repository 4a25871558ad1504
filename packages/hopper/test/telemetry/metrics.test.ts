import { describe, expect, it } from 'vitest';
import { InvalidNameError, InvalidOptionsError, MetricsTime, type FakeClock } from '../../src/index.js';
import { createBackend } from '../../src/backend/create.js';
import { MetricsRecorder, METRICS_FLUSH_MS } from '../../src/telemetry/metrics-recorder.js';
import { useHopper } from '../helpers/hopper.js';
import { collect, once, until } from '../helpers/wait.js';

const env = useHopper({ fakeClock: true });
const MINUTE = 60_000;

describe('metrics: per-minute counts of finished jobs', () => {
  it('counts completed and failed jobs per minute, written once a minute and on close', async () => {
    const clock = env.clock as FakeClock;
    const name = env.queueName();
    const queue = env.queue(name);
    const worker = env.worker(
      name,
      async (job) => {
        if (job.name === 'bad') throw new Error('no');
      },
      { metrics: { maxDataPoints: 10 } },
    );
    // minute 0: two completed, one failed
    const first = collect(worker, 'completed', 2);
    const failed = once(worker, 'failed');
    await queue.addBulk([
      { name: 'ok', data: {} },
      { name: 'ok', data: {} },
      { name: 'bad', data: {} },
    ]);
    await first;
    await failed;
    clock.advance(MINUTE); // the minute's counts are written
    // minute 1: one
    const second = once(worker, 'completed');
    await queue.add('ok', {});
    await second;
    clock.advance(3 * MINUTE);
    // minute 4: one, still open when the worker closes
    const third = once(worker, 'completed');
    await queue.add('ok', {});
    await third;
    await worker.close();

    const completed = await queue.getMetrics('completed');
    // Closed minutes, newest first: minutes 3, 2, 1, 0.
    expect(completed.data).toEqual([0, 0, 1, 2]);
    expect(completed.count).toBe(4);
    expect(completed.meta.count).toBe(4);
    expect(completed.meta.prevCount).toBe(3);
    expect(Math.floor(completed.meta.prevTS / MINUTE)).toBe(Math.floor(clock.now() / MINUTE));
    expect(await queue.getMetrics('completed', 1, 2)).toMatchObject({ data: [0, 1], count: 4 });

    const failures = await queue.getMetrics('failed');
    expect(failures.meta.count).toBe(1);
    expect(failures.data).toEqual([]);
  });

  it('merges the counts of several workers and keeps at most maxDataPoints', async () => {
    const clock = env.clock as FakeClock;
    const name = env.queueName();
    const queue = env.queue(name);
    const backend = createBackend({ connection: env.url, prefix: env.prefix, queueName: name, role: 'command' });
    env.track({ close: () => backend.close() });
    await backend.connect();
    const recorder = () => new MetricsRecorder({ backend, clock, maxDataPoints: 3, onError: (err) => expect.fail(String(err)) });
    const a = recorder();
    const b = recorder();
    a.note('completed');
    a.note('completed');
    b.note('completed');
    await a.flush();
    await b.flush(); // same minute: added to it
    expect((await queue.getMetrics('completed')).meta).toMatchObject({ count: 3, prevCount: 0 });

    clock.set(clock.now() - (clock.now() % MINUTE) + MINUTE); // start of minute 1
    b.note('completed');
    clock.advance(MINUTE); // minute 2
    a.note('completed');
    await a.flush(); // closes minutes 0 and 1
    await b.flush(); // B's minute 1 arrives late: counted in the open minute (2)
    expect(await queue.getMetrics('completed')).toMatchObject({ data: [0, 3], meta: { count: 5, prevCount: 3 } });

    clock.advance(10 * MINUTE);
    a.note('completed');
    await a.flush();
    // Minute 2 held 2 jobs and 9 empty minutes followed. As in BullMQ, a gap is written as at
    // most maxDataPoints points (the closed minute's count, then zeros), then trimmed to them.
    expect(await queue.getMetrics('completed')).toMatchObject({ data: [0, 0, 2], count: 3, meta: { count: 6, prevCount: 5 } });
    clock.advance(MINUTE);
    a.note('completed');
    await a.flush();
    expect((await queue.getMetrics('completed')).data).toEqual([1, 0, 0]);
    a.stop();
    b.stop();
  });

  it('writes on its own a minute after the first count', async () => {
    const clock = env.clock as FakeClock;
    const name = env.queueName();
    const queue = env.queue(name);
    const worker = env.worker(name, async () => 'ok', { metrics: {} });
    const done = once(worker, 'completed');
    await queue.add('ok', {});
    await done;
    expect((await queue.getMetrics('completed')).meta.count).toBe(0);
    clock.advance(METRICS_FLUSH_MS);
    await until(async () => (await queue.getMetrics('completed')).meta.count === 1, 'the worker wrote its count');
  });

  it('refuses bad options and arguments', async () => {
    const name = env.queueName();
    expect(() => env.worker(name, null, { metrics: { maxDataPoints: 0 } })).toThrow(InvalidOptionsError);
    const queue = env.queue(name);
    await expect(queue.getMetrics('active' as never)).rejects.toThrow(/'completed' or 'failed'/);
    await expect(queue.getMetrics('completed', 0.5)).rejects.toThrow(InvalidOptionsError);
    expect(MetricsTime.ONE_HOUR).toBe(60);
    expect(MetricsTime.ONE_WEEK).toBe(10_080);
  });
});

describe('exportPrometheusMetrics', () => {
  it("exports job counts per state and the metrics' totals in the Prometheus text format", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.addBulk([
      { name: 'a', data: {} },
      { name: 'b', data: {} },
      { name: 'c', data: {}, opts: { delay: MINUTE } },
    ]);
    const text = await queue.exportPrometheusMetrics({ env: 'prod "eu"' });
    const lines = text.split('\n');
    expect(lines.slice(0, 2)).toEqual(['# HELP bullmq_job_count Number of jobs in the queue by state', '# TYPE bullmq_job_count gauge']);
    expect(lines).toContain(`bullmq_job_count{queue="${name}", state="waiting", env="prod \\"eu\\""} 2`);
    expect(lines).toContain(`bullmq_job_count{queue="${name}", state="delayed", env="prod \\"eu\\""} 1`);
    expect(lines).toContain(`bullmq_job_completed_total{queue="${name}", env="prod \\"eu\\""} 0`);
    expect(lines).toContain('# TYPE bullmq_job_failed_total counter');
    await expect(queue.exportPrometheusMetrics({ 'bad-name': 'x' })).rejects.toThrow(/label name/);
  });

  it('escapes quotes and backslashes of a queue name; a name with a newline is refused at construction', async () => {
    const name = `${env.queueName()}"q\\x`;
    const queue = env.queue(name);
    await queue.add('a', {});
    const text = await queue.exportPrometheusMetrics({ env: 'a\nb' });
    const escaped = name.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
    expect(text.split('\n')).toContain(`bullmq_job_count{queue="${escaped}", state="waiting", env="a\\nb"} 1`);
    expect(() => env.queue(`${env.queueName()}\nx`)).toThrow(InvalidNameError);
  });
});
